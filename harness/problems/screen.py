"""The cheap part of the quality gate for problems from outside the shipped set (a path, a --problems-dir of
one's own, an audit's inline source): before any answer is built against one, it must import, build its Model
and return a plain tensor from forward on the meta device (gate.py's static mode, one child for all of them).
A problem that fails is excluded, with the reason. The shipped set's own rules (TAGS, comments on overrides, a
FLOP count) are not asked of foreign files, and whether their outputs can tell right from wrong is checked in
every evaluation (uninformative_problem). A problem that passed is remembered by its hash in the results
directory, so it is screened once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from harness.data import problems_root
from harness.problems import gate
from harness.process import write_atomic
from harness.types import Problem, Target

PASSED = "screened.json"  # the hashes of problem files that passed, under the gate's log directory


def shipped(problem: Problem) -> bool:
    return Path(problem.path).resolve().is_relative_to(problems_root().resolve())


def screen(problems: Iterable[Problem], target: Target, log_dir: Path) -> dict[str, list[str]]:
    """Why each foreign problem that fails cannot be used, by id (those that pass, and shipped ones, are absent)."""
    remembered = log_dir / PASSED
    try:
        passed = set(json.loads(remembered.read_text()))
    except (OSError, ValueError, TypeError):
        passed = set()
    todo = list({p.id: p for p in problems if not shipped(p) and p.sha256 not in passed}.values())
    if not todo:
        return {}
    failed: dict[str, list[str]] = {}

    def judge(problem: Problem, obs, _seconds: float) -> None:
        reasons = [obs] if isinstance(obs, str) else gate.output_reasons(obs)
        if reasons:
            failed[problem.id] = reasons
        else:
            passed.add(problem.sha256)

    gate.run_child_over(todo, "static", target, log_dir=log_dir, on_result=judge)
    log_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(remembered, json.dumps(sorted(passed)))
    return failed
