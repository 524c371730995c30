"""The profile tool's Nsight Compute counters through real evaluations on the cpu target, ncu faked at its boundary
(tests/fake_ncu.py: its command line and its report; the cpu target has no GPU for the real one, so its cuda-only
guard is lifted here). The runner runs behind the tool inside its sandbox, told to bracket its call; the report is
read from its log into the verdict's counters, stored with the evaluation and served from the store. The real tool
on a GPU: tests/gpu/test_profile_gpu.py."""
import sys

import pytest

from harness.agent.budget import Budget
from harness.agent.toolbox import Serving, Toolbox
from harness.config import load_settings
from harness.eval import counters
from harness.store import Store
from tests.conftest import REPO, SOLUTIONS

pytest.importorskip("triton")

PROBLEM = "cpu/relu"
TRITON_RELU = (SOLUTIONS / "triton" / "cpu" / "relu.py").read_text()  # builds nothing: no build child to wait for


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    settings = load_settings(results_dir=tmp_path_factory.mktemp("results"), trials=2, build_workers=1,
                             timing={"budget_s": 0.3})
    toolbox = Toolbox(Serving(target="cpu"), settings, Budget())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counters, "available", lambda target: True)
        patch.setenv(counters.PATH_ENV, f"{sys.executable} {REPO / 'tests' / 'fake_ncu.py'}")
        patch.setenv("FAKE_NCU_KERNEL", "triton_relu_kernel")
        first = toolbox.profile(PROBLEM, TRITON_RELU)
        patch.setenv("FAKE_NCU_KERNEL", "a kernel a second run would name")
        second = toolbox.profile(PROBLEM, TRITON_RELU)
    with Store(settings.db) as store:
        stored = list(store.results(toolbox.run))
    return first, second, stored


def test_the_tool_s_report_becomes_the_profile_s_kernels(profiled):
    first, _, _ = profiled
    assert first["status"] == "correct", first["error"]
    ncu = first["ncu"]
    assert ncu["note"] is None and ncu["launches"] == 1 and ncu["seconds"] > 0
    (kernel,) = ncu["kernels"]
    assert (kernel["name"], kernel["block"], kernel["grid"]) == ("triton_relu_kernel", "(256, 1, 1)", "(4096, 1, 1)")
    assert kernel["duration_us"] == pytest.approx(12.345) and kernel["dram_read_bytes"] == 4_194_304


def test_counters_are_read_once_and_stored_with_the_evaluation(profiled):
    first, second, stored = profiled
    kept = {r.counters.kernels[0].name for r in stored if r.counters is not None}  # what the store holds
    if "contended" in first["flags"]:  # measured on a loaded machine: not served again (store.find), profiled anew
        assert second["ncu"]["kernels"][0]["name"] == "a kernel a second run would name"
        assert kept == {"triton_relu_kernel", "a kernel a second run would name"}
    else:
        assert second["ncu"] == first["ncu"]  # served: no second run under the tool
        assert kept == {"triton_relu_kernel"}
