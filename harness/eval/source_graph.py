"""What a candidate's source reaches, for the static rules (rules.py): what the name ModelNew is bound to
(the one definition extraction, the precheck and the rules share), an index of its imports and definitions, a
graph from each name to the names its definition mentions, and whether ModelNew.forward reaches a kernel build
(load_inline / load) through it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

KERNEL_BUILDERS = {"torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load",
                   "triton.jit", "triton.autotune", "cupy.RawKernel", "cupy.RawModule", "numba.cuda.jit"}
KERNEL = "<kernel>"  # graph node every kernel build reaches


class Index(ast.NodeVisitor):
    """Imports (alias -> qualified name) and an identifier graph (name -> names its definition mentions)."""

    def __init__(self, tree: ast.Module):
        self.aliases: dict[str, str] = {}
        self.modules: set[str] = set()  # qualified names bound by imports
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    self.modules.add(a.name)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        self.aliases = {k: canonical(v) for k, v in self.aliases.items()}

    def qualname(self, node: ast.AST) -> str | None:
        """`F.relu` -> torch.nn.functional.relu, when the chain starts at an imported name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def is_module_ref(self, node: ast.AST) -> bool:
        """An expression naming an imported module or something inside one (not a local object)."""
        return self.qualname(node) is not None


def canonical(name: str) -> str:
    return "numpy" + name[5:] if name == "numpy" or name.startswith("numpy.") else name


def names(node: ast.AST, index: Index) -> set[str]:
    """Identifiers an expression or body mentions; `torch.relu` mentions torch, not relu."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute) and not index.is_module_ref(sub.value):
            found.add(sub.attr)
        elif isinstance(sub, ast.Call) and index.qualname(sub.func) in KERNEL_BUILDERS:
            found.add(KERNEL)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                index.qualname(d.func if isinstance(d, ast.Call) else d) in KERNEL_BUILDERS
                for d in sub.decorator_list):
            found.add(KERNEL)
    return found


def graph(tree: ast.Module, index: Index) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}

    def add(name: str, node: ast.AST) -> None:
        graph.setdefault(name, set()).update(names(node, index))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        add(t.id, node.value)
                    elif isinstance(t, ast.Attribute):  # self.ext = ext
                        add(t.attr, node.value)
    return graph


def reaches_kernel(start: Iterable[str], graph: dict[str, set[str]]) -> bool:
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name == KERNEL:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, ()))
    return False


def receiver_names(node: ast.AST) -> set[str]:
    """`ext`, `self.ext`, `self.ext_mod` -> the names that may hold an extension module."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr} | receiver_names(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return {node.func.id}  # _get_ext().relu(x)
    return set()


def aliased(value: ast.AST) -> set[str]:
    """What a binding's value is another name for: `ext`, `self.ext`, or the result of `get_ext()`."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        return receiver_names(value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return {value.func.id}
    return set()


def kernel_modules(tree: ast.Module, index: Index) -> set[str]:
    """Names bound to a built extension (`ext = load_inline(...)`, `self.ext = ext`, a lazy getter)."""
    def builds(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and index.qualname(c.func) in KERNEL_BUILDERS for c in ast.walk(node))

    bindings: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)):
                    bindings.append((target.id if isinstance(target, ast.Name) else target.attr, node.value))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    bindings.append((node.name, ret.value))
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in bindings:
            if name not in found and (builds(value) or aliased(value) & found):
                found.add(name)
                changed = True
    return found


ENTRY = "ModelNew"
_BINDS_ENTRY = re.compile(rf"^[ \t]*(class[ \t]+{ENTRY}\b|{ENTRY}[ \t]*(:[^=\n]*)?=[^=])", re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    """What ModelNew is at the end of the module, as far as the source shows: a class defined in the file (its
    own class first, then the bases defined in the file, in lookup order), or `why` it is something else."""

    node: ast.AST                            # the statement that binds it last
    classes: tuple[ast.ClassDef, ...] = ()
    why: str | None = None                   # not a class of the file: how it is bound (the rules reject it)

    @property
    def forward(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        return next((m for cls in self.classes if (m := method(cls, "forward"))), None)


def entry(tree: ast.Module) -> Entry | None:
    """The binding of ModelNew that the module leaves (None: nothing binds it). `ModelNew = Impl` is Impl;
    a binding the source cannot settle (an import, a call's result, one inside an if or try) has a `why`."""
    bound: dict[str, ast.ClassDef | str] = {}
    bases: dict[int, list[ast.ClassDef]] = {}
    where: dict[str, ast.AST] = {}
    for stmt in tree.body:
        for name, value in _bindings(stmt, bound):
            bound[name], where[name] = value, stmt
            if isinstance(value, ast.ClassDef) and value is stmt:
                bases[id(stmt)] = [base for b in stmt.bases
                                   if isinstance(b, ast.Name) and isinstance(base := bound.get(b.id), ast.ClassDef)]
    if ENTRY not in bound:
        return None
    if any(isinstance(n, ast.Global) and ENTRY in n.names for n in ast.walk(tree)):
        return Entry(where[ENTRY], why="assigned through a global statement")
    value = bound[ENTRY]
    if isinstance(value, str):
        return Entry(where[ENTRY], why=value)
    chain: list[ast.ClassDef] = []
    todo = [value]
    while todo:  # depth first, left to right: Python's lookup order for the single inheritance answers use
        cls = todo.pop(0)
        if cls not in chain:
            chain.append(cls)
            todo[:0] = bases.get(id(cls), [])
    return Entry(where[ENTRY], classes=tuple(chain))


def _bindings(stmt: ast.stmt, bound: dict) -> list[tuple[str, ast.ClassDef | str]]:
    """The top-level names one statement binds, each to a class of the file or to how it is bound."""
    if isinstance(stmt, ast.ClassDef):
        return [(stmt.name, stmt)]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(stmt.name, f"the function {stmt.name}")]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [((a.asname or a.name).split(".")[0], f"imported ({a.name})") for a in stmt.names]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt.value, ast.Name):
            value = bound.get(stmt.value.id, f"{stmt.value.id}, which is not a class defined before it")
        else:
            value = f"the result of `{ast.unparse(stmt.value)[:60]}`"
        return [(t.id, value if isinstance(t, ast.Name) else "bound by unpacking")
                for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)]
    line = getattr(stmt, "lineno", 0)
    return [(name, f"bound inside a `{type(stmt).__name__.lower()}` statement (line {line})")
            for name in _stored_names(stmt)]


def _stored_names(stmt: ast.stmt) -> set[str]:
    return {n.name if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else n.id
            for n in ast.walk(stmt)
            if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))}


def binds_entry(source: str, to_a_class: bool = False) -> bool:
    """Whether a source binds ModelNew (`to_a_class`: to a class defined in it); for a source that does not
    parse, whether a line looks like it does."""
    try:
        found = entry(ast.parse(source))
    except (SyntaxError, ValueError):
        return bool(_BINDS_ENTRY.search(source))
    return found is not None and not (to_a_class and found.why)


def method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                None)


def reachable_defs(forward: ast.AST | None, tree: ast.Module, index: Index) -> list[ast.AST]:
    """forward and the functions and methods it reaches by name: the code a timed call runs."""
    defs: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, []).append(node)
    if forward is None:
        return []
    seen: set[int] = set()
    out: list[ast.AST] = []
    todo: list[ast.AST] = [forward]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        for name in names(node, index):
            todo.extend(defs.get(name, ()))
    return out
