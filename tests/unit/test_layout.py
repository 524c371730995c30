"""The layout tells the flow and the process boundary: only harness.child runs torch and candidate code (and
harness.fastbuild, which the build child calls, imports torch only inside its functions), every child starts
through its one entry, and imports go one way between the packages."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
SHARED = {"harness.types", "harness.process", "harness.config", "harness.device", "harness.facts", "harness.store",
          "harness.data", "harness.store_schema", "harness.protocol", "harness.sandbox", "harness.seal",
          "harness.freeze", "harness.records", "harness.checks", "harness.workloads", "harness.compiler_lines",
          "harness.flags", "harness.errors", "harness.markers", "harness.batch_child", "harness.figures",
          "harness.store_records", "harness.store_seals", "harness.cpu_stat", "harness.completions",
          "harness.device_lock", "harness.evidence"}
# What each part may import besides itself (the shared modules import only each other). The parent's packages
# never import harness.child: what crosses the boundary is a process and its JSON (protocol.py, process.py).
# Build acceleration (fastbuild) is one seam both sides use: it imports only the shared modules.
MAY_IMPORT = {
    "child": {"harness.types", "harness.protocol", "harness.process", "harness.freeze", "harness.records",
              "harness.checks", "harness.workloads", "harness.compiler_lines", "harness.errors", "harness.markers",
              "harness.batch_child", "harness.figures", "harness.cpu_stat", "harness.device_lock", "harness.evidence",
              "fastbuild"},
    "fastbuild": SHARED,
    "problems": SHARED,
    "eval": SHARED | {"problems", "fastbuild"},
    "report": SHARED | {"eval"},
    "llm": SHARED | {"problems", "eval"},
    "api": SHARED | {"problems", "eval", "report", "llm", "agent"},
    "agent": SHARED | {"problems", "eval", "llm"},
    "cli": SHARED | {"problems", "eval", "report", "llm", "api", "fastbuild", "agent"},
    "rl": SHARED | {"problems", "llm", "api"},
    "harness": SHARED | {"problems", "eval", "report", "llm", "api", "cli", "agent"},
    "__main__": {"cli"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Every module this one imports, at the top or inside a function (a lazy import still couples them)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def harness_imports(module: str) -> set[str]:
    return {m for m in imports(MODULES[module]) if m in MODULES and m != module and m != "harness"}


def part(module: str) -> str:
    """harness.eval.build -> eval; harness.types -> the module itself (shared); harness -> harness."""
    if module in SHARED:
        return module
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "harness"


def is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def test_only_the_child_package_imports_torch():
    outside = {m: sorted(filter(is_torch, imports(p))) for m, p in MODULES.items()
               if not m.startswith(("harness.child", "harness.fastbuild"))}
    assert {m: i for m, i in outside.items() if i} == {}


def test_build_acceleration_imports_torch_only_inside_functions():
    """The parent imports harness.fastbuild too (the makers, the grants): torch waits for the build child's call."""
    at_import = {}
    for module, path in MODULES.items():
        if module.startswith("harness.fastbuild"):
            tree = ast.parse(path.read_text())
            top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
            at_import[module] = sorted(filter(is_torch, names))
    assert at_import and {m: i for m, i in at_import.items() if i} == {}


def test_importing_every_parent_module_leaves_torch_unloaded():
    parent = [m for m in MODULES if not m.startswith("harness.child") and not m.endswith("__main__")]
    code = f"import importlib, sys\nfor m in {parent!r}: importlib.import_module(m)\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_every_child_starts_through_harness_child():
    mains = sorted(m for m, p in MODULES.items()
                   if m.endswith(".__main__") or 'if __name__ == "__main__"' in p.read_text())
    assert mains == ["harness.__main__", "harness.child.__main__"], mains
    launches = {m for m, p in MODULES.items() if '"-m"' in p.read_text()}
    assert launches == {"harness.process"}, launches  # CHILD, the one command line every child runs


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith("__init__")))
def test_imports_go_one_way(module):
    own = part(module)
    allowed = MAY_IMPORT.get(own, SHARED)
    wrong = sorted(d for d in harness_imports(module) if part(d) != own and part(d) not in allowed
                   and d not in allowed)
    assert wrong == [], f"{module} ({own}) may not import {wrong}"


def test_no_import_cycle():
    graph = {m: harness_imports(m) for m in MODULES}
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(dep):] + [dep]))
            if dep not in state:
                visit(dep, path + [dep])
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_modules_and_functions_stay_small():
    """No module over 400 lines, no function over 60: one job each, readable in one sitting."""
    long_modules = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 400}
    long_functions = {f"{m}.{node.name}": node.end_lineno - node.lineno + 1
                      for m, p in MODULES.items() for node in ast.walk(ast.parse(p.read_text()))
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.end_lineno - node.lineno + 1 > 60}
    assert (long_modules, long_functions) == ({}, {})
