"""An unchanged KernelBench file on the GPU: one public workload, the problem as written, judged and timed as
before (its 5 trials, its own inputs). Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.config import load_settings
from harness.device import discover, visible_gpus
from harness.eval.candidate import load_candidate
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.problems.index import resolve
from harness.store import Store
from tests.conftest import FIXTURES, SOLUTIONS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]


def test_a_kernelbench_file_is_one_public_workload_judged_as_before(tmp_path):
    problem = resolve(str(FIXTURES / "kernelbench" / "level1" / "19_ReLU.py"))
    assert [w.name for w in problem.workloads] == ["default"]
    settings = load_settings(results_dir=tmp_path, timing={"budget_s": 2.0})
    with Store(settings.db) as store:
        ((_, result),) = evaluate([Job(problem, load_candidate(str(SOLUTIONS / "correct" / "cuda_relu.py")))],
                                  device=discover("cuda"), settings=settings, store=store, run=RunLabel("kb", "eval"))
    assert result.status == "correct", result.error
    (default,) = result.workloads
    assert default.name == "default" and default.status == "correct" and default.trials == 5 and default.timed
    assert result.speedup == pytest.approx(result.ref_runtime_ms / result.runtime_ms)
    assert result.check.check == "truth" and result.check.truth == "float64"
