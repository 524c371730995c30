"""The one table of flags (harness/flags.py): README's table, the report's explanations and the counting rule come
from it, and no module raises a flag by a string literal, so none can raise one the table does not know."""

import ast
import re
from pathlib import Path

from harness import flags
from harness.eval.plausibility import CONFIRMED
from harness.eval.rules import RULES
from harness.report.details import report_details
from harness.rl import GAMING_FLAGS, MACHINE_FLAGS
from harness.store import Store
from harness.types import EvalResult

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness"
# Tables of command-line options, which the CLI also calls flags: no result carries them.
CLI_OPTIONS = {("config.py", "FLAGS"), ("cli/run.py", "GENERATION_FLAGS")}


def sources(package: Path = PACKAGE) -> dict[str, ast.Module]:
    return {str(p.relative_to(package)): ast.parse(p.read_text()) for p in sorted(package.rglob("*.py"))
            if p.name != "flags.py" or p.parent != package}


def strings(node: ast.AST) -> list[ast.Constant]:
    """The plain string constants under `node` (an f-string's pieces are text, not a flag)."""
    pieces = {id(c) for j in ast.walk(node) if isinstance(j, ast.JoinedStr) for c in ast.walk(j)}
    return [c for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            and id(c) not in pieces]


def values(node: ast.AST) -> list[ast.AST]:
    """What an expression can evaluate to, literally: a display's elements, either side of an `if` or a `+`."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [v for element in node.elts for v in values(element)]
    if isinstance(node, ast.IfExp):
        return values(node.body) + values(node.orelse)
    if isinstance(node, ast.BinOp):
        return values(node.left) + values(node.right)
    if isinstance(node, ast.Starred):
        return values(node.value)
    return [node]


def named_flags(name: str) -> bool:
    return name.lower() == "flags" or name.lower().endswith("_flags")


def flag_sinks(module: str, tree: ast.Module) -> list[ast.AST]:
    """Where a flag is raised: merged or appended into flags, assigned to a name of flags, passed as flags=, or
    returned by a function of flags."""
    sinks: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            receiver = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            if named_flags(called) or named_flags(receiver) and called in ("append", "extend", "add"):
                sinks += node.args
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any(named_flags(n) and (module, n) not in CLI_OPTIONS for n in names):
                sinks.append(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "flags":
            sinks.append(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "flags" in node.name:
            sinks += [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
    return sinks


def literal_flags(package: Path = PACKAGE) -> dict[str, list[tuple[int, str]]]:
    """String literals raised as flags, or spelling a known flag, outside harness/flags.py."""
    found: dict[str, list[tuple[int, str]]] = {}
    for module, tree in sources(package).items():
        raised = {id(v): v for sink in flag_sinks(module, tree) for v in values(sink)
                  if isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.isidentifier()}
        known = {id(c): c for c in strings(tree) if c.value in flags.FLAGS}
        hits = sorted((c.lineno, c.value) for c in {**raised, **known}.values())
        if hits:
            found[module] = hits
    return found


def test_no_module_raises_a_flag_by_a_literal():
    assert literal_flags() == {}


def test_the_scan_finds_literal_flags(tmp_path):
    """The scan sees a known flag spelled out and a new one raised in each kind of place."""
    (tmp_path / "raiser.py").write_text(
        "def checks(report):\n"
        "    flags = ['brand_new']\n"
        "    flags.append('another_one')\n"
        "    flags += ('a_third',)\n"
        "    return merge_flags(flags, ['in_merge']), Result(flags=('as_keyword',)), f'{report} hidden_work'\n"
        "def extra_flags():\n"
        "    return ['returned']\n"
        "NAME = 'hidden_work'\n"
        "GENERATION_FLAGS = ('model',)\n")
    assert literal_flags(tmp_path) == {"raiser.py": [
        (2, "brand_new"), (3, "another_one"), (4, "a_third"), (5, "as_keyword"), (5, "in_merge"), (7, "returned"),
        (8, "hidden_work"), (9, "model")]}


def test_the_prompts_ask_only_of_known_flags():
    templates = (ROOT / "prompts").rglob("*.j2")
    asked = {m for p in templates for m in re.findall(r"[\"'](\w+)[\"'] in flags", p.read_text())}
    assert asked and asked <= set(flags.FLAGS)


def test_readme_table_is_the_record():
    readme = (ROOT / "README.md").read_text()
    assert flags.markdown_table() in readme, "README's flag table differs from harness/flags.py's: paste " \
                                             "flags.markdown_table() into README's Flags section"


def test_every_flag_is_recorded_once_with_its_meaning():
    assert len(flags.FLAGS) == len(flags.TABLE)
    assert all(f.name.isidentifier() and f.name.islower() and len(f.meaning) > 20 for f in flags.TABLE)
    assert flags.EXCLUDING == {f.name for f in flags.TABLE if f.excludes}


def test_the_flag_sets_named_elsewhere_are_in_the_table():
    rule_flags = {rule.flag for rule in RULES.values() if rule.policy == "flag"}
    assert all(rule.flag is None for rule in RULES.values() if rule.policy == "reject")
    assert None not in rule_flags and rule_flags <= set(flags.FLAGS)
    assert {flags.FLAGS[f].raised_by for f in rule_flags} == {"static rules"}
    # flags that blame the candidate or the machine are excluding ones: its speed is never counted
    assert CONFIRMED <= GAMING_FLAGS <= flags.EXCLUDING and MACHINE_FLAGS <= flags.EXCLUDING


def result(status="correct", speedup=2.0, flagged=()) -> EvalResult:
    return EvalResult(problem_id="p", problem_sha256="0" * 64, candidate_sha256="1" * 64, status=status,
                      speedup=speedup, candidate_path=None, device_name="d", target="cpu", torch_version="t",
                      flags=tuple(flagged))


def test_the_counting_rule_follows_the_table():
    assert result().counted and not result("incorrect").counted and not result(speedup=None).counted
    for flag in flags.TABLE:
        assert result(flagged=[flag.name]).counted is not flag.excludes, flag.name


def test_the_report_explains_every_flag_from_the_table(tmp_path):
    with Store(tmp_path / "r.db") as store:
        details = report_details(store, [], [])
    assert details["flags"] == flags.MEANINGS and details["excluding"] == sorted(flags.EXCLUDING)
