"""Attacks on the evaluation's own process (tests/fixtures/solutions/judge/, issue 19 item 2): candidates whose code
changes what a single evaluation process would check, time or report. The candidate runs in a runner process and
the verdict is decided by a judge process it cannot reach, so each must get its header's verdict:

  # attack: reregister-reference        the trick
  # problem: cpu/relu                   the problem it attacks
  # naive: correct                      what tests/naive_eval.py (one process, like KernelBench's) makes of it:
                                        `correct` is checked (the trick fools it); anything else is a note
  # single-process: correct (...)       what the harness said while the candidate ran in the checking process
  # verdict: incorrect                  its status now, with the static rules off, +flags that must be raised

Each attack's message must not hold the run's seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.freeze import TARGETS
from tests.corpus import CORPUS, evaluate_files, fooled, naive

HEADER = re.compile(r"^# (attack|problem|naive|single-process|verdict): (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Attack:
    path: Path
    target: str
    name: str
    problem: str
    naive: str
    status: str
    flags: frozenset[str]


def attacks(target: str) -> list[Attack]:
    found = []
    for path in sorted((CORPUS / "judge").glob(f"{target}_*.py")):
        fields = dict(HEADER.findall(path.read_text()))
        status, *flags = fields["verdict"].split("+")
        found.append(Attack(path, target, fields["attack"], fields["problem"], fields["naive"], status,
                            frozenset(flags)))
    return found


def judge_tests(target: str) -> dict:
    """The fixtures and tests for one target; a test module takes them into its globals."""
    import pytest

    entries = attacks(target)
    ids = [a.path.stem for a in entries]

    @pytest.fixture(scope="module")
    def judged(tmp_path_factory):
        by_problem: dict[str, list[Path]] = {}
        for a in entries:
            by_problem.setdefault(a.problem, []).append(a.path)
        results = evaluate_files(by_problem, target, tmp_path_factory.mktemp("judge"), static_rules=False)
        for path, r in results.items():  # shown with -s
            print(f"{path.name}: {r.status} speedup={r.speedup} flags={list(r.flags)} "
                  f"unreported_ms={r.figures.evidence.unreported_ms} deferred_ms={r.figures.evidence.deferred_ms} "
                  f"ref_ms={r.ref_runtime and r.ref_runtime.median_ms} eval_s={r.figures.stages.eval_s}")
        return results

    @pytest.mark.parametrize("attack", entries, ids=ids)
    def test_the_judge_is_not_fooled(attack: Attack, judged) -> None:
        result = judged[attack.path]
        assert result.status == attack.status, f"{attack.name}: {result.status}: {result.error}"
        missing = attack.flags - set(result.flags)
        if "contended" in result.flags:  # other processes delay the judge's clocks: a contended result is not judged
            missing -= {"hidden_work", "timing_disputed"}
        assert not missing, f"{attack.name}: flags {result.flags}"
        if result.status == "correct" and target in TARGETS:  # each reference call timed with the candidate stopped
            evidence = result.figures.evidence
            assert (evidence.runner_stopped or 0) >= result.ref_runtime.n, evidence
            assert evidence.runner_running == 0 or "contended" in result.flags, evidence
        if attack.flags:  # a flag that disputes the figures keeps the result out of every rate
            assert not result.counted
        assert "the run's seed" not in (result.error or "")

    naive_entries = [a for a in entries if a.naive == "correct"]

    @pytest.mark.slow  # that the attack is one is the fixture's property (as the corpus's naive check)
    @pytest.mark.parametrize("attack", naive_entries, ids=[a.path.stem for a in naive_entries])
    def test_the_attack_fools_a_single_process_evaluator(attack: Attack, judged) -> None:
        from tests.corpus import Entry

        entry = Entry(attack.path, target, attack.name, attack.problem, "correct", frozenset(), attack.status,
                      attack.flags)
        outcome = naive(entry, judged[attack.path].build.directory)
        assert fooled(entry, outcome), outcome

    return {"judged": judged, "test_the_judge_is_not_fooled": test_the_judge_is_not_fooled,
            "test_the_attack_fools_a_single_process_evaluator": test_the_attack_fools_a_single_process_evaluator}
