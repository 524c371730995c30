"""Re-checking published claims: a released answer set (JSON lines) read into problems and sources, and each
answer's measured result set beside what its authors claimed."""

from __future__ import annotations

import ast
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from harness.checks import CHECK_NAMES
from harness.errors import InputError
from harness.eval import source_graph
from harness.problems.index import ProblemError, resolve
from harness.types import Problem

FIELDS = {"problem", "source", "claimed_speedup", "label", "check"}


class AnswersError(InputError, ValueError):
    """An answer file that cannot be audited; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Answer:
    label: str
    problem: Problem
    source: str
    claimed_speedup: float | None
    check: str | None = None  # the check the claim was made with (checks.CHECK_NAMES); None: the audit's default


def read_answers(path: Path, problems_dir: Path | None, scratch: Path) -> list[Answer]:
    """Every line of `path` as an Answer, or AnswersError for the first bad one (nothing is evaluated then).
    A line's `problem` is an id, a path, or a problem's own source (written to `scratch`, named by its hash)."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise AnswersError(f"{path}: cannot be read ({exc})") from None
    answers = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            answers.append(_answer(json_object(line, f"{path}:{number}"), f"{path}:{number}", problems_dir,
                                   scratch, default_label=f"line {number}"))
    if not answers:
        raise AnswersError(f"{path}: no answers (one JSON object per line: {{\"problem\": ..., \"source\": ...}})")
    return answers


KERNELBENCH_SAMPLE = re.compile(r"level_?(\d+)_problem_(\d+)_sample_(\d+)")  # level_1_problem_19_sample_0_kernel.py
PROBLEM_HEADER = re.compile(r"^# problem: (.+)$", re.MULTILINE)


def read_answer_dir(directory: Path, problems_dir: Path | None) -> list[Answer]:
    """Every file under `directory` that binds ModelNew, as an Answer, or AnswersError naming the first whose
    problem cannot be found. Its problem, in order: a `# problem: ID_OR_PATH` line; KernelBench's sample names
    (`level_1_problem_19_sample_0_kernel.py`: the problem file `level1/19_*.py` of the problems directory); its
    place in a dump laid out as `LEVEL/PROBLEM/SAMPLE.py` (the problem `LEVEL/PROBLEM`); else the problem file
    beside it (defining Model, not ModelNew) whose name begins its own."""
    answers: list[tuple[Path, str]] = []
    problems_beside: dict[Path, list[Path]] = {}
    for path in sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts):
        try:
            source = path.read_text()
            tree = ast.parse(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue  # not an answer this reader can see: extraction reports such files when they are one
        if source_graph.entry(tree) is not None:
            answers.append((path, source))
        elif any(isinstance(n, ast.ClassDef) and n.name == "Model" for n in tree.body):
            problems_beside.setdefault(path.parent, []).append(path)
    if not answers:
        raise AnswersError(f"{directory}: no answers (.py files that define ModelNew) under it")
    return [Answer(str(path.relative_to(directory)), _answer_problem(path, source, directory, problems_dir,
                                                                     problems_beside.get(path.parent, [])),
                   source, None) for path, source in answers]


def _answer_problem(path: Path, source: str, directory: Path, problems_dir: Path | None,
                    beside: list[Path]) -> Problem:
    where = str(path)
    try:
        if header := PROBLEM_HEADER.search(source):
            return resolve(header.group(1).strip(), problems_dir)
        if sample := KERNELBENCH_SAMPLE.search(path.stem):
            level, number = sample.group(1), sample.group(2)
            found = sorted((problems_dir or Path(".")).glob(f"level{level}/{number}_*.py"))
            if len(found) != 1:
                raise AnswersError(f"{where}: KernelBench's problem {number} of level {level} is not one file in "
                                   f"{problems_dir}/level{level} (give --problems-dir the checkout's KernelBench/ "
                                   f"folder)")
            return resolve(str(found[0]), problems_dir)
        parts = path.relative_to(directory).parts
        if len(parts) == 3 and problems_dir and (problems_dir / parts[0] / f"{parts[1]}.py").is_file():
            return resolve(f"{parts[0]}/{parts[1]}", problems_dir)
        named = [p for p in beside if path.stem.startswith(p.stem)]
        if named:
            return resolve(str(max(named, key=lambda p: len(p.stem))), problems_dir)
    except ProblemError as exc:
        raise AnswersError(f"{where}: {exc}") from None
    raise AnswersError(f"{where}: its problem is not known: add a line `# problem: ID_OR_PATH`, name it as "
                       "KernelBench does (level_1_problem_19_sample_0_kernel.py), lay the directory out as "
                       "LEVEL/PROBLEM/SAMPLE.py under --problems-dir's problems, or put the problem file beside "
                       "it (relu.py for relu_answer.py)")


def json_object(line: str, where: str) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise AnswersError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise AnswersError(f"{where}: a JSON object is needed, not {type(record).__name__}")
    unknown = sorted(set(record) - FIELDS)
    if unknown:
        raise AnswersError(f"{where}: unknown field(s) {', '.join(unknown)}; "
                           f"the fields are {', '.join(sorted(FIELDS))}")
    return record


def _answer(record: dict, where: str, problems_dir: Path | None, scratch: Path, default_label: str) -> Answer:
    problem, source = record.get("problem"), record.get("source")
    if not isinstance(problem, str) or not problem.strip():
        raise AnswersError(f"{where}: \"problem\" must be a problem id, a path or a problem's source")
    if not isinstance(source, str) or not source.strip():
        raise AnswersError(f"{where}: \"source\" must be the answer's Python code (defining ModelNew)")
    claimed = record.get("claimed_speedup")
    if claimed is not None and (isinstance(claimed, bool) or not isinstance(claimed, (int, float))
                                or not math.isfinite(claimed) or claimed <= 0):
        raise AnswersError(f"{where}: \"claimed_speedup\" must be a positive number, not {claimed!r}")
    label = record.get("label", default_label)
    if not isinstance(label, str):
        raise AnswersError(f"{where}: \"label\" must be a string")
    check = record.get("check")
    if check is not None and check not in CHECK_NAMES:
        raise AnswersError(f"{where}: \"check\" must be one of {', '.join(CHECK_NAMES)} (the check the claim was "
                           f"made with), not {check!r}")
    try:
        resolved = resolve(_problem_file(problem, scratch) if "\n" in problem else problem, problems_dir)
    except ProblemError as exc:
        raise AnswersError(f"{where}: {exc}") from None
    return Answer(label, resolved, source, float(claimed) if claimed is not None else None, check)


def _problem_file(source: str, scratch: Path) -> str:
    """An inline problem, written once under its hash (the same source is the same problem)."""
    path = scratch / f"{hashlib.sha256(source.encode()).hexdigest()[:16]}.py"
    if not path.is_file():
        scratch.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return str(path)


def verdict_reason(status: str, error: str | None, flags: tuple[str, ...], uninformative: str | None) -> str:
    """Why a result is what it is, in one line: the error's first line, else why it is not counted."""
    if error:  # a heading line ("rejected by static rules:") and its items, on one line
        return " ".join(line.strip() for line in error.strip().splitlines()[:4])[:240]
    if uninformative:
        return f"uninformative problem: {uninformative}"[:200]
    return ", ".join(flags) if flags else ("counted" if status == "correct" else "-")
