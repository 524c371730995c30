"""`--sanitize` through real evaluations on the cpu target, compute-sanitizer faked at its boundary
(tests/fake_sanitizer.py: the tool's command line and exit contract; the cpu target has no CUDA for the real one to
check, so its cuda-only guard is lifted here). The sanitized run's runner goes behind the tool inside its sandbox;
the tool's errors make a matching answer a runtime_error quoting its lines; a candidate that kills the tool gets no
pass; the store keeps the findings. The real tool on a GPU: tests/gpu/test_sanitize_gpu.py."""
import sys

import pytest

from harness.config import load_settings
from harness.device import discover
from harness.eval import sanitize
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.problems.index import resolve
from harness.store import Store
from tests.conftest import FIXTURES, REPO, SOLUTIONS, run_cli

pytest.importorskip("triton")

TRITON_RELU = (SOLUTIONS / "triton" / "cpu" / "relu.py").read_text()  # builds nothing: no build child to wait for
KILLS_THE_TOOL = TRITON_RELU.replace("\n\n@triton.jit", '''
import os
import signal

with open(f"/proc/{os.getppid()}/cmdline", "rb") as parent:
    if b"sanitizer" in parent.read():  # run under the tool: kill it, hoping to pass unchecked
        os.kill(os.getppid(), signal.SIGKILL)

@triton.jit''', 1)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """Each case's results: the tool clean (an honest answer, one that kills the tool), the tool reporting two
    errors; and the rows stored."""
    settings = load_settings(results_dir=tmp_path_factory.mktemp("results"), trials=2, build_workers=1,
                             timing={"budget_s": 0.3}, sanitize="memcheck")
    problem = resolve(str(FIXTURES / "problems" / "relu.py"))

    def run(sources: list[str], errors: int) -> list:
        with pytest.MonkeyPatch.context() as patch, Store(settings.db) as store:
            patch.setattr(sanitize, "require", lambda tool, target: None)
            patch.setenv(sanitize.PATH_ENV, f"{sys.executable} {REPO / 'tests' / 'fake_sanitizer.py'}")
            patch.setenv("FAKE_SANITIZER_ERRORS", str(errors))
            jobs = [Job(problem, candidate_from_source(source)) for source in sources]
            return [result for _, result in evaluate(jobs, device=discover("cpu"), settings=settings, store=store,
                                                     run=RunLabel("sanitized", "eval"))]
    clean, killer = run([TRITON_RELU, KILLS_THE_TOOL], errors=0)
    (flagged,) = run([TRITON_RELU + "\n# the same answer, evaluated where the tool reports errors\n"], errors=2)
    with Store(settings.db) as store:
        stored = {result.candidate_sha256: result for result in store.results("sanitized")}
    return {"clean": clean, "killer": killer, "flagged": flagged, "stored": stored}


def test_a_clean_run_under_the_tool_keeps_the_verdict_and_records_the_findings(evaluated):
    result = evaluated["clean"]
    assert result.status == "correct", result.error
    found = result.sanitizer
    assert found is not None and (found.tool, found.errors, found.exit_status, found.lines) == ("memcheck", 0, 0, ())
    assert found.seconds > 0


def test_errors_the_tool_reports_make_a_matching_answer_a_runtime_error_quoting_them(evaluated):
    result = evaluated["flagged"]
    assert result.status == "runtime_error" and result.speedup is None
    assert result.sanitizer.errors == 2 and result.sanitizer.exit_status == sanitize.ERROR_EXIT
    assert "compute-sanitizer memcheck found 2 errors in one checked call" in result.error
    assert "its outputs matched" in result.error
    assert "Invalid __global__ write of size 4 bytes" in result.error and "by thread (1,0,0)" in result.error
    assert "<scratch>/cuda.cu:12" in result.error  # the runner's scratch directory renamed
    assert "Host Frame" not in result.error and "COMPUTE-SANITIZER" not in result.error
    assert not result.counted


def test_a_candidate_that_kills_the_tool_gets_no_pass(evaluated):
    result = evaluated["killer"]
    assert result.status == "runtime_error", (result.status, result.error)
    assert result.sanitizer is None or result.sanitizer.exit_status != 0


def test_the_store_keeps_the_findings_with_the_verdict(evaluated):
    """What a later run serves again where the same tool is asked for (pipeline.sanitized_with)."""
    for name in ("clean", "flagged"):
        result = evaluated[name]
        stored = evaluated["stored"][result.candidate_sha256]
        assert (stored.status, stored.sanitizer) == (result.status, result.sanitizer)


def test_sanitize_where_it_cannot_run_is_refused_before_anything_runs(tmp_path):
    proc = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", "--sanitize", "--results-dir", tmp_path,
                   SOLUTIONS / "triton" / "cpu" / "relu.py", timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--sanitize checks CUDA kernels: it needs the cuda target" in proc.stderr
    assert not (tmp_path / "harness.db").exists()  # nothing stored
