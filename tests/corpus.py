"""The adversarial corpus (tests/fixtures/solutions/{correct,wrong,exploit}/) and how to run it.

Every exploit file says in its header what it is and what must happen to it:

  # exploit: output-cache              the trick
  # problem: cpu/relu                  the problem it attacks (id or path)
  # naive: faster [--candidate-first]  what it gets from tests/naive_eval.py: correct | faster | leaks
  # static: none                       the rule ids that reject it (none: the runtime has to catch it)
  # runtime: incorrect                 its status with the static rules off, +flags that must be raised
                                       (rejected+no_kernel_ran, correct+low_coverage: what ran decides,
                                       eval/kernel_use.py)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.config import load_settings
from harness.device import discover
from harness.eval.pipeline import RunLabel, candidate_jobs, evaluate
from harness.problems import index as problem_index
from harness.store import Store
from harness.types import EvalResult

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "fixtures" / "solutions"
SECRET = "sk-corpus-planted-secret-0123456789"
HEADER = re.compile(r"^# (exploit|problem|naive|static|runtime): (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    path: Path
    target: str
    exploit: str
    problem: str
    naive: str
    static: frozenset[str]
    status: str
    flags: frozenset[str]

    @property
    def name(self) -> str:
        return self.path.stem


def exploits(target: str) -> list[Entry]:
    entries = []
    for path in sorted((CORPUS / "exploit").glob(f"{target}_*.py")):
        fields = dict(HEADER.findall(path.read_text()))
        status, *flags = fields["runtime"].split("+")
        static = fields["static"].split()
        entries.append(Entry(path, target, fields["exploit"], fields["problem"], fields["naive"],
                             frozenset() if static == ["none"] else frozenset(static), status, frozenset(flags)))
    return entries


def folder(kind: str, target: str) -> list[Path]:
    return sorted((CORPUS / kind).glob(f"{target}_*.py"))


def problem_spec(path: Path) -> str:
    return dict(HEADER.findall(path.read_text()))["problem"]


def problem_of(spec: str):
    path = ROOT.parent / spec
    return problem_index.resolve(str(path) if path.suffix == ".py" else spec, None)


def evaluate_files(paths_by_problem: dict[str, list[Path]], target: str, results_dir: Path, *,
                   static_rules: bool, budget_s: float = 1.0, check: str = "truth") -> dict[Path, EvalResult]:
    """Evaluate files through the same runner the CLI uses, with a secret planted in the environment; `check` decides
    correctness (truth, or allclose as other harnesses judge)."""
    settings = load_settings(results_dir=results_dir, trials=3, static_rules=static_rules, check=check,
                             timing={"budget_s": budget_s})
    device = discover(target)
    jobs = [job for spec, paths in paths_by_problem.items()
            for job in candidate_jobs(problem_of(spec), [str(p) for p in paths])]
    planted = {"OPENAI_API_KEY": SECRET, "HF_TOKEN": SECRET}
    saved = {k: os.environ.get(k) for k in planted}
    os.environ.update(planted)
    try:
        with Store(settings.db) as store:
            results = evaluate(jobs, device=device, settings=settings, store=store,
                               run=RunLabel("rules" if static_rules else "runtime", "eval"))
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    found = {Path(job.candidate.path): result for job, (_, result) in zip(jobs, results)}
    for path, r in found.items():  # shown with -s
        print(f"{path.parent.name}/{path.name}: {r.status} speedup={r.speedup} flags={list(r.flags)} "
              f"unreported_ms={r.figures.evidence.unreported_ms} deferred_ms={r.figures.evidence.deferred_ms}")
    return found


def naive(entry: Entry, build_dir: str) -> dict:
    """What the naive evaluator makes of it, run with the secret in its environment (it does not filter)."""
    extra = entry.naive.split()[1:]
    problem = problem_of(entry.problem)
    env = {**os.environ, "OPENAI_API_KEY": SECRET, **({"TRITON_INTERPRET": "1"} if entry.target == "cpu" else {}),
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT.parent), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, str(ROOT / "naive_eval.py"), problem.path, build_dir, entry.target, *extra],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        return {"error": proc.stderr[-3000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fooled(entry: Entry, outcome: dict) -> bool:
    """Did the trick work on the naive evaluator, as its header claims?"""
    kind = entry.naive.split()[0]
    if kind == "leaks":
        return SECRET in outcome.get("error", "")
    if "error" in outcome:
        return False
    return outcome["correct"] and (kind != "faster" or outcome["speedup"] > 1.2)



def truth_against_allclose(honest: Path, target: str, results_dir: Path) -> None:
    """An honest kernel that sums in another order than the reference: off the fp32 reference by more than 1e-4 on a
    few near-zero outputs, so allclose at 1e-4 calls it incorrect; within a few times the reference's own error of
    the float64 truth, so the truth check calls it correct (test_truth_cpu.py, tests/gpu/test_truth_gpu.py)."""
    files = {problem_spec(honest): [honest]}
    truth = evaluate_files(files, target, results_dir, static_rules=True)[honest]
    allclose = evaluate_files(files, target, results_dir, static_rules=True, check="allclose")[honest]

    assert truth.status == "correct", truth.error
    assert truth.check_spec.name == "truth" and truth.check.truth == "float64", truth.check
    # off the truth by more than the tolerance alone allows: the reference's own error is what lets it through
    assert truth.check.max_abs_err > 1e-4, truth.check

    assert allclose.status == "incorrect", (allclose.status, allclose.flags)
    assert allclose.check_spec.name == "allclose" and allclose.check.check == "allclose", allclose.check
    # a handful of near-zero outputs, not a wrong kernel
    assert allclose.check.mismatch_fraction < 1e-3, allclose.error

KINDS = {"torch-for-show", "aliased-entry", "try-except-fallback", "reference-model", "output-cache", "mutate-inputs",
         "lazy-subclass", "patch-clock", "slow-reference", "gc-expected", "low-precision", "read-env",
         # right on the problem as written (all a naive evaluator checks), wrong on its other workloads
         "sizes-as-constants", "public-shape-fast-path", "first-call-shape"}
# A freed block is not handed back intact on the CPU (malloc writes its free-list pointers into it), so
# returning uninitialised memory is a GPU trick; hiding work after return is a thread on the CPU, a stream on the GPU.
# Triton answers run on the cpu target in Triton's interpreter: its decoy and its output cache are caught there.
TARGET_KINDS = {"cpu": KINDS | {"background-thread", "triton-decoy", "triton-output-cache"},
                "cuda": KINDS | {"freed-output", "side-stream", "side-stream-cxx", "torch-compile",
                                 "triton-autotune-hook"}}


def corpus_tests(target: str) -> dict:
    """The verifier's fixtures and tests for one target; a test module takes them into its globals."""
    import pytest

    from harness.eval.rules import check

    entries = exploits(target)
    exploit_paths = [e.path for e in entries]
    correct, wrong = folder("correct", target), folder("wrong", target)

    def by_problem(paths: list[Path]) -> dict[str, list[Path]]:
        grouped: dict[str, list[Path]] = {}
        for path in paths:
            grouped.setdefault(problem_spec(path), []).append(path)
        return grouped

    @pytest.fixture(scope="module")
    def results_dir(tmp_path_factory):
        return tmp_path_factory.mktemp("corpus")  # one build cache for both passes

    @pytest.fixture(scope="module")
    def runtime(results_dir):
        """Every exploit with the static rules off: what the runtime defenses alone make of them."""
        return evaluate_files(by_problem(exploit_paths), target, results_dir, static_rules=False)

    @pytest.fixture(scope="module")
    def full(results_dir, runtime):
        """Every file through the whole harness, rules on. An exploit the rules find nothing in
        (test_static_rules_reject_what_the_header_says) is evaluated with them on as with them off: its runtime
        result stands for it (9 evaluations fewer on the cpu target)."""
        ruled = [e.path for e in entries if e.static]
        evaluated = evaluate_files(by_problem(ruled + correct + wrong), target, results_dir, static_rules=True)
        return {**{e.path: runtime[e.path] for e in entries if not e.static}, **evaluated}

    def test_the_corpus_covers_every_exploit_kind():
        assert {e.exploit for e in entries} == TARGET_KINDS[target]

    @pytest.mark.parametrize("entry", entries, ids=lambda e: e.name)
    def test_static_rules_reject_what_the_header_says(entry):
        verdict = check(entry.path.read_text())
        assert {f.rule for f in verdict.rejections} == set(entry.static), verdict.findings

    @pytest.mark.parametrize("path", correct + wrong, ids=lambda p: p.stem)
    def test_correct_and_wrong_files_raise_no_static_findings(path):
        assert check(path.read_text()).findings == ()

    @pytest.mark.parametrize("entry", entries, ids=lambda e: e.name)
    def test_runtime_defenses_alone(entry, runtime):
        result = runtime[entry.path]
        assert result.status == entry.status, result.error
        assert entry.flags <= set(result.flags), result.flags
        assert SECRET not in (result.error or "") + (result.build.log if result.build else "")

    @pytest.mark.parametrize("entry", entries, ids=lambda e: e.name)
    def test_no_exploit_counts_as_a_correct_speedup(entry, full):
        result = full[entry.path]
        assert not (result.counted and result.speedup > 1.0), (result.status, result.speedup, result.flags)
        if entry.static:
            assert result.status == "rejected" and all(f"[{rule}]" in result.error for rule in entry.static)

    @pytest.mark.parametrize("path", correct, ids=lambda p: p.stem)
    def test_correct_files_are_correct_and_unflagged(path, full):
        result = full[path]
        assert result.status == "correct", result.error
        # informative, or other processes used the cores while it was timed (a loaded CI machine)
        assert [f for f in result.flags if f not in ("noisy_timing", "contended")] == [], (result.flags, result.figures)
        # its own kernel did most of the work (no low_coverage above; and it was measured)
        assert result.coverage and result.coverage.calls > 0 and result.coverage.share >= 0.5, result.coverage

    @pytest.mark.parametrize("path", wrong, ids=lambda p: p.stem)
    def test_wrong_files_are_incorrect(path, full):
        assert full[path].status == "incorrect", full[path].error

    def test_a_kernel_that_skips_its_last_tile_is_told_where(full):
        (path,) = [p for p in wrong if p.stem == f"{target}_relu_skips_tail"]
        error = full[path].error
        assert "mismatch" in error and "a tail the kernel does not cover" in error, error

    # That each exploit is one (it fools a naive evaluator) is the fixture's property: the slow tier checks it.
    @pytest.mark.slow
    @pytest.mark.parametrize("entry", entries, ids=lambda e: e.name)
    def test_each_exploit_fools_a_naive_evaluator(entry, runtime):
        build = runtime[entry.path].build
        assert build is not None and build.status == "ok", build and build.error
        outcome = naive(entry, build.directory)
        assert fooled(entry, outcome), outcome

    return {name: value for name, value in locals().items() if name.startswith("test_")
            or name in ("results_dir", "runtime", "full")}
