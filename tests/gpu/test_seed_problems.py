"""The CUDA path on the three seed problems: correct, wrong, and an illegal memory access followed by
a correct kernel. Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.config import load_settings
from harness.device import discover, visible_gpus
from harness.eval.candidate import load_candidate
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.problems.index import resolve
from harness.store import Store
from tests.conftest import REPO, SOLUTIONS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

SEEDS = {
    "level1/reverse_cumsum": SOLUTIONS / "wrong" / "cuda_reverse_cumsum_no_carry.py",
    "level1/sum_dim1": SOLUTIONS / "wrong" / "cuda_sum_dim1_partial.py",
    "level1/masked_cumsum": SOLUTIONS / "wrong" / "cuda_masked_cumsum_ignores_mask.py",
}
OOB = SOLUTIONS / "crash" / "cuda_oob_write.py"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    jobs = []
    for problem_id, wrong in SEEDS.items():
        problem = resolve(problem_id)
        correct = REPO / "solutions" / "reference" / f"{problem_id}.py"
        # The illegal memory access comes right before the correct kernel, which must not notice.
        jobs += [Job(problem, load_candidate(str(p))) for p in (wrong, OOB, correct)]
    settings = load_settings(results_dir=tmp_path_factory.mktemp("results"), timing={"budget_s": 3.0})
    with Store(settings.db) as store:
        out = evaluate(jobs, device=discover("cuda"), settings=settings, store=store, run=RunLabel("gpu", "eval"))
    return {(r.problem_id, r.candidate_path): r for _, r in out}


@pytest.mark.parametrize("problem_id", SEEDS)
def test_correct_naive_kernel(results, problem_id):
    r = results[(problem_id, str(REPO / "solutions" / "reference" / f"{problem_id}.py"))]
    assert r.status == "correct", r.error
    assert r.speedup > 0 and r.runtime.n >= 3 and r.ref_runtime.n == r.runtime.n
    print(f"{problem_id}: reference {r.ref_runtime_ms:.3f} ms, candidate {r.runtime_ms:.3f} ms, "
          f"speedup {r.speedup:.2f}x, n={r.runtime.n}, flags={list(r.flags)}")


@pytest.mark.parametrize("problem_id", SEEDS)
def test_wrong_kernel(results, problem_id):
    r = results[(problem_id, str(SEEDS[problem_id]))]
    assert r.status == "incorrect", r.error
    assert r.check.mismatch_fraction > 0.1 and r.check.max_abs_err > 0
    print(f"{problem_id}: wrong kernel: {r.error}")


@pytest.mark.parametrize("problem_id", SEEDS)
def test_illegal_memory_access_is_a_runtime_error(results, problem_id):
    r = results[(problem_id, str(OOB))]
    assert r.status == "runtime_error"
    assert "illegal memory access" in r.error.lower() or "illegal address" in r.error.lower(), r.error


def test_builds_pin_the_architecture_of_the_gpu_present(results):
    arch = discover("cuda").arch  # e.g. 9.0a on an H100
    sm = "sm_" + arch.replace(".", "")
    for (_problem_id, path), r in results.items():
        if r.build and r.build.status == "ok" and not r.build.cached:
            assert sm in r.build.log, f"{path}: nvcc was not asked for {sm}"
            assert "sm_80" not in r.build.log.replace(sm, "")
