"""The agents' `profile` tool on a GPU with NVIDIA Nsight Compute: per kernel of one checked call, ncu's metrics,
read once under the harness's sandbox and stored with the evaluation (eval/counters.py). The honest float4 ReLU on a
256 MB input reads it once from device memory and runs at a good share of the memory's peak; the run that warms it
up is not profiled. Needs a GPU and ncu: `pytest -m gpu`."""
import pytest

from harness.agent.budget import Budget
from harness.agent.toolbox import Serving, Toolbox
from harness.config import load_settings
from harness.device import visible_gpus
from harness.eval.counters import executable
from tests.conftest import SOLUTIONS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU"),
              pytest.mark.skipif(executable() is None, reason="needs ncu")]

PROBLEMS = SOLUTIONS / "problems"
HONEST = SOLUTIONS / "correct" / "cuda_relu.py"
INPUT_BYTES = 8192 * 8192 * 4


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    toolbox = Toolbox(Serving(target="cuda", problems_dir=PROBLEMS),
                      load_settings(results_dir=tmp_path_factory.mktemp("results"), trials=2,
                                    timing={"budget_s": 1.0}), Budget())
    return toolbox.profile("relu", HONEST.read_text()), toolbox.profile("relu", HONEST.read_text())


def test_ncu_measures_the_candidate_s_kernel_in_the_profiled_call(profiled):
    answer, _ = profiled
    assert answer["status"] == "correct", answer["error"]
    ncu = answer["ncu"]
    assert ncu["note"] is None and ncu["seconds"] > 0, ncu
    kernel = ncu["kernels"][0]
    assert kernel["name"].startswith("relu4"), ncu["kernels"]
    assert (kernel["block"], kernel["grid"]) == ("(256, 1, 1)", "(4096, 1, 1)")
    assert kernel["registers"] > 0 and kernel["duration_us"] > 0


def test_its_counters_are_the_kernel_s_traffic(profiled):
    kernel = profiled[0]["ncu"]["kernels"][0]
    assert 0.95 * INPUT_BYTES <= kernel["dram_read_bytes"] <= 1.2 * INPUT_BYTES, kernel
    assert kernel["dram_write_bytes"] >= 0.5 * INPUT_BYTES, kernel  # up to L2's 50 MB may stay there when it ends
    assert kernel["memory_pct"] > 50 and kernel["compute_pct"] < kernel["memory_pct"], kernel


def test_the_warm_up_call_is_not_profiled_and_a_second_profile_is_served_from_the_store(profiled):
    first, second = profiled
    assert first["ncu"]["launches"] == sum(k["name"].startswith("relu4") for k in first["ncu"]["kernels"]) == 1
    assert second["ncu"] == first["ncu"]  # read once: the same record, its seconds included
