"""A problem file's WORKLOADS, read from its syntax tree (never imported): checked against the module constants it
sets, and cut out of the source the prompt shows (harness/workloads.py says what a workload is)."""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import ValidationError

from harness.workloads import DEFAULT, Workload

KEYS = tuple(Workload.model_fields)


def module_constants(tree: ast.Module) -> dict[str, object]:
    """Names assigned at module level, each with its literal value (or ... where it is not a literal)."""
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                found[node.targets[0].id] = ...
    return found


def parse_workloads(path: Path, tree: ast.Module, raw: object, error: type[Exception]) -> tuple[Workload, ...]:
    """DEFAULT, then the workloads WORKLOADS declares (`raw`, its literal value; None: no WORKLOADS). Raises `error`
    naming the file, the workload and what is wrong."""
    if raw is None:
        return (DEFAULT,)
    if not isinstance(raw, list) or not all(isinstance(w, dict) for w in raw):
        raise error(f"{path}: WORKLOADS must be a list of dicts, one per workload")
    constants = module_constants(tree)
    found = [DEFAULT]
    for i, entry in enumerate(raw):
        label = f"WORKLOADS[{i}]" + (f" ({entry['name']!r})" if isinstance(entry.get("name"), str) else "")
        unknown = sorted(set(entry) - set(KEYS))
        if unknown:
            raise error(f"{path}: {label} has unknown key(s) {', '.join(map(repr, unknown))}; a workload takes "
                        f"{', '.join(KEYS)}")
        try:
            workload = Workload.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'workload'}: {e['msg']}" for e in exc.errors())
            raise error(f"{path}: {label}: {problems}") from None
        for reason in set_reasons(workload, constants):
            raise error(f"{path}: {label}: {reason}")
        if any(w.name == workload.name for w in found):
            raise error(f"{path}: {label}: the name {workload.name!r} is taken"
                        + (" (default is the problem as written)" if workload.name == DEFAULT.name else ""))
        found.append(workload)
    return tuple(found)


def set_reasons(workload: Workload, constants: dict[str, object]) -> list[str]:
    """What is wrong with the constants a workload sets: one that the file does not assign at module level, or a
    value of another type than the file's."""
    reasons = []
    for name, value in workload.set.items():
        if name not in constants:
            reasons.append(f"sets {name}, which the file does not assign at module level (workloads set module "
                           "constants, e.g. BATCH = 16)")
            continue
        written = constants[name]
        if written is ... or written is None:
            continue
        if isinstance(value, tuple):
            if type(written) is not int:
                reasons.append(f"draws {name} from a range, but the file's {name} is not an integer")
        elif not (type(value) is type(written) or (type(written) is float and type(value) is int)):
            reasons.append(f"sets {name} to {value!r}, but the file's {name} is a {type(written).__name__}")
    return reasons


def public_source(source: str, workloads: tuple[Workload, ...]) -> str:
    """The problem's source as the model sees it: the WORKLOADS assignment cut out (held-out workloads are never
    shown; the public ones are listed beside the source)."""
    if len(workloads) == 1:
        return source
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "WORKLOADS"):
            start = node.lineno - 1
            while start > 0 and lines[start - 1].lstrip().startswith("#"):  # its comment goes with it
                start -= 1
            end = node.end_lineno or node.lineno  # ast.parse sets it
            if end < len(lines) and not lines[end].strip() and start > 0 and not lines[start - 1].strip():
                end += 1  # one blank line, not two, where it stood between others
            return "".join(lines[:start] + lines[end:])
    return source
