"""Problem files: index them by parsing (no torch import), resolve names, select sets.

A problem file defines `class Model`, `get_inputs()` and `get_init_inputs()` (returning a list).
Module constants the harness reads (literals): LEVEL, TAGS, TARGET, TOLERANCE (atol = rtol), ATOL,
RTOL, MEMORY_GB, FLOPS, BYTES, MAX_SPEEDUP, MIN_COVERAGE, WORKLOADS (problems/workload_file.py). README's
"Adding a problem" says what each means.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from harness.data import problems_root
from harness.errors import InputError
from harness.problems.workload_file import parse_workloads
from harness.types import Problem

METADATA = ("LEVEL", "TAGS", "TARGET", "TOLERANCE", "ATOL", "RTOL", "MEMORY_GB", "FLOPS", "BYTES", "MAX_SPEEDUP",
            "MIN_COVERAGE", "WORKLOADS", "TRAINING")


class ProblemError(InputError, ValueError):
    """A problem file or name that cannot be used; the message says what and how to fix it."""


def default_root() -> Path:
    """Where problems are when no root is given (Settings.problems_dir, from --problems-dir, the config file
    or $HARNESS_PROBLEMS_DIR, is given by its callers): the problem set shipped with the harness (problems/ of
    this checkout, or the installed wheel's copy), else ./problems."""
    for candidate in (problems_root(), Path.cwd() / "problems"):
        if candidate.is_dir():
            return candidate.resolve()
    return (Path.cwd() / "problems").resolve()


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
               ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod}


def _arithmetic(node: ast.AST, known: dict[str, object]):
    """A number from literals, earlier module constants and + - * / // % ** (FLOPS = 2 * M * N * K)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and isinstance(known.get(node.id), (int, float)):
        return known[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand, known)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic(node.left, known), _arithmetic(node.right, known))
    raise ValueError(f"line {getattr(node, 'lineno', '?')}: {ast.unparse(node)!r} is not arithmetic over numbers "
                     "and earlier constants")


def _literal(node: ast.AST, path: Path, name: str, known: dict[str, object]):
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    try:
        return _arithmetic(node, known)
    except (ValueError, ArithmeticError) as exc:
        raise ProblemError(f"{path}: {name} must be a literal or arithmetic over earlier constants ({exc})") from None


def _is_list_expr(node: ast.AST | None) -> bool | None:
    """True if `node` is certainly a list, False if certainly not, None if unknown statically."""
    if node is None:
        return False
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list":
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _is_list_expr(node.left), _is_list_expr(node.right)
        return True if (left or right) else (None if None in (left, right) else False)
    if isinstance(node, (ast.Tuple, ast.Constant, ast.Dict, ast.Set, ast.DictComp, ast.SetComp,
                         ast.GeneratorExp, ast.JoinedStr)):
        return False
    return None


def _returns(func: ast.FunctionDef) -> list[ast.Return]:
    """Return statements of `func` itself, not of nested functions."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def problem_id(path: Path, root: Path) -> str:
    """`level1/reverse_cumsum` for files under root, else the path as given."""
    try:
        return path.resolve().relative_to(root.resolve()).with_suffix("").as_posix()
    except ValueError:
        return str(path)


def parse_problem(path: Path, root: Path | None = None) -> Problem:
    """Parse and statically validate one problem file. Raises ProblemError naming the file and the gap."""
    root = root or default_root()
    path = Path(path)
    raw, tree = _read(path)
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProblemError(f"{path}: a problem file must be UTF-8 text (byte {exc.start} is not)") from None
    _check_shape(path, tree)
    constants = _metadata(path, tree)
    pid = problem_id(path, root)
    tol = constants.get("TOLERANCE")
    atol, rtol = (_tolerance(path, name, constants.get(name, tol)) for name in ("ATOL", "RTOL"))
    tags = constants.get("TAGS", ())
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise ProblemError(f"{path}: TAGS must be a list of strings")
    target = constants.get("TARGET", "cpu" if "cpu" in Path(pid).parts[:-1] else "cuda")
    if target not in ("cuda", "cpu"):
        raise ProblemError(f"{path}: TARGET must be 'cuda' or 'cpu', not {target!r}")
    numbers = _positive_numbers(path, constants)
    training = constants.get("TRAINING", False)
    if not isinstance(training, bool):
        raise ProblemError(f"{path}: TRAINING must be True or False, not {training!r}")
    doc = ast.get_docstring(tree) or ""
    return Problem(
        id=pid,
        path=str(path.resolve()),
        level=_level(path, pid, constants),
        sha256=hashlib.sha256(raw).hexdigest(),
        source=source,
        description=doc.strip().splitlines()[0] if doc.strip() else "",
        atol=atol,
        rtol=rtol,
        tags=tuple(tags),
        target=target,
        memory_gb=numbers.memory_gb,
        flops=numbers.flops,
        bytes=numbers.bytes,
        max_speedup=numbers.max_speedup,
        min_coverage=numbers.min_coverage,
        workloads=parse_workloads(path, tree, constants.get("WORKLOADS"), ProblemError),
        training=training,
    )


def _read(path: Path) -> tuple[bytes, ast.Module]:
    if path.suffix != ".py":
        raise ProblemError(f"{path}: a problem file must be a .py file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProblemError(f"{path}: cannot read problem file ({exc.strerror})") from None
    try:
        return raw, ast.parse(raw, filename=str(path))
    except SyntaxError as exc:
        raise ProblemError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None


def _check_shape(path: Path, tree: ast.Module) -> None:
    """class Model, get_inputs(), and get_init_inputs() returning a list."""
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = [what for what, ok in (
        ("class Model (the reference nn.Module)", "Model" in classes),
        ("function get_inputs() (returns the forward inputs)", "get_inputs" in funcs),
        ("function get_init_inputs() (returns the constructor arguments as a list)", "get_init_inputs" in funcs),
    ) if not ok]
    if missing:
        raise ProblemError(f"{path}: not a valid problem file, missing " + "; ".join(missing))
    verdicts = [_is_list_expr(r.value) for r in _returns(funcs["get_init_inputs"])] or [False]
    if False in verdicts:
        raise ProblemError(f"{path}: get_init_inputs() must return a list (e.g. `return []` or `return [dim]`)")


def _metadata(path: Path, tree: ast.Module) -> dict[str, object]:
    """The module's METADATA constants, literals or arithmetic over earlier numeric constants."""
    constants: dict[str, object] = {}
    known: dict[str, object] = {}  # numeric module constants so far, for arithmetic metadata
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in METADATA:
                constants[name] = known[name] = _literal(node.value, path, name, known)
            else:
                with contextlib.suppress(ValueError, ArithmeticError, TypeError, RecursionError):
                    known[name] = _arithmetic(node.value, known)
    return constants


def _level(path: Path, pid: str, constants: dict[str, object]) -> int | None:
    match = re.search(r"(?:^|/)level(\d+)(?:/|$)", pid)
    if match:
        return int(match.group(1))
    level = constants.get("LEVEL")
    if level is not None and not isinstance(level, int):
        raise ProblemError(f"{path}: LEVEL must be an integer")
    return level


def _tolerance(path: Path, name: str, value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or value < 0:
        raise ProblemError(f"{path}: {name}/TOLERANCE must be a non-negative number")
    return float(value)


class _Numbers(NamedTuple):
    memory_gb: float | None
    flops: int | None
    bytes: int | None
    max_speedup: float | None
    min_coverage: float | None


def _positive_numbers(path: Path, constants: dict[str, object]) -> _Numbers:
    def number(name: str, valid: Callable[[float], bool], must_be: str) -> float | None:
        value = constants.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not valid(value):
            raise ProblemError(f"{path}: {name} must be {must_be}")
        return value

    def positive(name: str) -> float | None:
        return number(name, lambda v: v > 0, "a positive number")

    def whole(value: float | None) -> int | None:
        return None if value is None else round(value)

    def real(value: float | None) -> float | None:
        return None if value is None else float(value)

    return _Numbers(  # checked in this order, so a file with several errors names the first
        memory_gb=real(positive("MEMORY_GB")), flops=whole(positive("FLOPS")), bytes=whole(positive("BYTES")),
        max_speedup=real(number("MAX_SPEEDUP", lambda v: v > 1, "a number above 1")),
        min_coverage=real(number("MIN_COVERAGE", lambda v: 0 <= v <= 1, "a number from 0 to 1 (a share of the work)")))


def _problem_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py")
                  if not p.name.startswith("_") and "__pycache__" not in p.parts)


def index(root: Path | None = None) -> tuple[list[Problem], list[str]]:
    """All problems under root, plus one error message per malformed file (which is skipped)."""
    root = root or default_root()
    problems: list[Problem] = []
    errors: list[str] = []
    if not root.is_dir():
        return problems, [f"{root}: problems directory not found (set --problems-dir or HARNESS_PROBLEMS_DIR)"]
    for path in _problem_files(root):
        try:
            problems.append(parse_problem(path, root))
        except ProblemError as exc:
            errors.append(str(exc))
    return problems, errors


def resolve(name: str, root: Path | None = None) -> Problem:
    """A problem by id (`level1/reverse_cumsum`) or by path to any .py file."""
    root = root or default_root()
    if name.endswith(".py") or Path(name).is_file():
        if not Path(name).is_file():
            raise ProblemError(f"{name}: no such problem file")
        return parse_problem(Path(name), root)
    path = root / f"{name}.py"
    if path.is_file():
        return parse_problem(path, root)
    known = [problem_id(p, root) for p in _problem_files(root)] if root.is_dir() else []
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if not close:  # a bare stem such as `reverse_cumsum` matches `level1/reverse_cumsum`
        close = [k for k in known if k.rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]][:3]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else \
        "; run `harness problems list` to see the ids"
    raise ProblemError(f"unknown problem {name!r} (looked in {root}){hint}")


def select(selector: str, root: Path | None = None) -> list[Problem]:
    """Comma-separated sets (`level1`, `cpu`), directories, ids or .py paths, in order, without repeats."""
    root = root or default_root()
    chosen: dict[str, Problem] = {}
    for item in (s.strip() for s in selector.split(",")):
        if not item:
            continue
        directory = root / item if (root / item).is_dir() else Path(item)
        if directory.is_dir():
            files = _problem_files(directory)
            if not files:
                raise ProblemError(f"{directory}: no problem files (*.py) in this directory")
            found = [parse_problem(p, root) for p in files]
        else:
            found = [resolve(item, root)]
        for problem in found:
            chosen.setdefault(problem.path, problem)
    if not chosen:
        raise ProblemError(f"problem selector {selector!r} selects nothing")
    return list(chosen.values())
