"""harness/agent: the budget an agent spends, what its answers may tell of held-out workloads, and the calls that
are refused before anything runs (the whole server through the mcp SDK: tests/integration/test_mcp_cpu.py)."""
import asyncio
import json
import threading

import pytest

from harness.agent.budget import Budget, BudgetSpent
from harness.agent.profile import profile_record
from harness.agent.toolbox import Serving, Toolbox, ToolError, agent_record
from harness.agent.turn_tools import TurnTools
from harness.config import load_settings
from harness.eval.context import ProblemContext
from harness.evidence import Counters, Coverage, KernelCounters, KernelTime
from harness.types import Baseline, DeviceInfo, Peaks, Timing
from harness.workloads import WorkloadResult
from tests.conftest import LEAN_RELU, eval_result


def test_a_call_is_taken_when_it_starts_and_its_seconds_when_it_ends():
    budget = Budget(calls=2, seconds=100.0)
    with budget.spending():
        assert budget.record()["calls_left"] == 1 and budget.record()["seconds_used"] == 0.0
    with budget.spending():
        pass
    with pytest.raises(BudgetSpent, match="2 calls are spent"), budget.spending():
        pass
    assert budget.record()["calls_used"] == 2
    assert Budget().record() == {"calls_used": 0, "calls_left": None, "seconds_used": 0.0, "seconds_left": None}


def test_a_call_starts_while_any_second_is_left_and_none_after():
    budget = Budget(seconds=0.05)
    with budget.spending():
        threading.Event().wait(0.06)
    assert budget.record()["seconds_left"] == 0.0
    with pytest.raises(BudgetSpent, match="0.05 s are spent"), budget.spending():
        pass


def test_two_calls_at_once_cannot_both_take_the_last_one():
    budget, started, refused = Budget(calls=1), threading.Event(), []
    release = threading.Event()

    def call():
        try:
            with budget.spending():
                started.set()
                release.wait(5)
        except BudgetSpent:
            refused.append(True)

    first = threading.Thread(target=call)
    first.start()
    started.wait(5)
    call()  # the second, while the first holds the only call
    release.set()
    first.join()
    assert refused == [True]


def test_a_held_out_workload_keeps_its_status_and_description_only():
    workloads = (WorkloadResult(name="default", about="as written", public=True, status="correct", values={"N": 8}),
                 WorkloadResult(name="secret", about="a ragged batch", public=False, status="incorrect",
                                values={"N": 4093}, message="mismatch at N=4093"))
    result = eval_result().model_copy(update={"workloads": workloads})
    record = agent_record(result.summary(), result)
    assert record["workloads"][0]["values"] == {"N": 8}
    assert record["workloads"][1] == {"about": "a ragged batch", "public": False, "timed": False,
                                      "status": "incorrect"}
    assert "candidate" not in record and "4093" not in str(record)


@pytest.fixture(scope="module")
def toolbox():
    return Toolbox(Serving(target="cpu"), load_settings(), Budget(calls=1))


def test_only_the_served_problems_can_be_named_and_never_by_path(toolbox):
    assert [p["problem"] for p in toolbox.list_problems("cpu/relu")["problems"]] == ["cpu/relu"]
    assert len(toolbox.list_problems("cpu")["problems"]) == len(toolbox.problems) > 1
    for name in ("cpu/relux", "problems/cpu/relu.py", "../problems/cpu/relu", "level1/relu"):
        with pytest.raises(ToolError, match="unknown problem"):
            toolbox.show_problem(name)
    with pytest.raises(ToolError, match="under 'level1'"):
        toolbox.list_problems("level1")


def test_a_source_that_cannot_be_a_candidate_is_refused_before_any_budget_is_spent(toolbox):
    for source, said in (("", "source is empty"), ("import torch\n", "defines no ModelNew"),
                         ("#" * (1 << 20) + LEAN_RELU, "over the 1,048,576")):
        with pytest.raises(ToolError, match=said):
            toolbox.evaluate("cpu/relu", source)
    assert toolbox.budget.record()["calls_used"] == 0


def test_a_server_without_its_device_says_so_and_lists_still(monkeypatch):
    monkeypatch.setattr("harness.device.visible_gpus", lambda: [])
    cuda = Toolbox(Serving(target="cuda"), load_settings(), Budget())
    assert cuda.list_problems("level1/relu")["problems"]
    with pytest.raises(ToolError, match="cannot evaluate: --target cuda needs an NVIDIA GPU"):
        cuda.evaluate("level1/relu", LEAN_RELU)


def test_sanitize_is_offered_on_a_gpu_alone_and_refused_elsewhere_before_any_budget_is_spent(toolbox):
    """compute-sanitizer checks CUDA kernels: a cpu server refuses the MCP tool, and a run's turns are not offered it
    (a call to it is answered that there is no such tool)."""
    with pytest.raises(ToolError, match="sanitize cannot run here: --sanitize checks CUDA kernels"):
        toolbox.sanitize("cpu/relu", LEAN_RELU)
    with pytest.raises(ToolError, match="the tools are memcheck, racecheck"):
        toolbox.sanitize("cpu/relu", LEAN_RELU, tool="initcheck")
    assert toolbox.budget.record()["calls_used"] == 0
    cuda = Toolbox(Serving(target="cuda"), load_settings(), Budget())
    names = [[schema["function"]["name"] for schema in TurnTools(box).schemas()] for box in (toolbox, cuda)]
    assert names == [["evaluate", "profile"], ["evaluate", "profile", "sanitize"]]
    answer, refused = asyncio.run(TurnTools(toolbox).call(toolbox.problems["cpu/relu"], "sanitize",
                                                          json.dumps({"source": LEAN_RELU}), 3))
    assert refused and answer == "there is no tool 'sanitize'; the tools are evaluate(source), profile(source)"


def test_a_profile_gives_each_kernel_s_share_and_the_rate_against_the_speed_of_light():
    coverage = Coverage(share=0.75, candidate_ms=3.0, pytorch_ms=1.0, calls=2,
                        top=(KernelTime(name="relu_kernel", owner="candidate", ms=3.0),
                             KernelTime(name="aten::copy_", owner="pytorch", ms=1.0)))
    timing = Timing(median_ms=2.0, mean_ms=2.0, std_ms=0.0, min_ms=2.0, n=3, rse=0.0)
    result = eval_result().model_copy(update={"coverage": coverage, "runtime": timing})
    eager = Baseline(bytes_moved=4_000_000_000, flops=2_000_000_000)
    context = ProblemContext(eager=eager, peaks=Peaks(bandwidth_gbs=4000.0), device=DeviceInfo(target="cuda", name="d"))
    record = profile_record(result, context)
    assert [(k["name"], k["owner"], k["share"]) for k in record["kernels"]] == [
        ("relu_kernel", "candidate", 0.75), ("aten::copy_", "pytorch", 0.25)]
    light = record["speed_of_light"]
    assert (light["achieved_gbs"], light["achieved_tflops"]) == (2000.0, 1.0)  # 4 GB and 2 GFLOP in 2 ms
    assert light["sol_ms"] == pytest.approx(1.0) and light["sol_fraction"] == pytest.approx(0.5)  # 4 GB at 4 TB/s
    bare = profile_record(eval_result(), ProblemContext())
    assert bare["kernels"] == [] and bare["speed_of_light"]["achieved_gbs"] is None
    assert bare["ncu"] == {"kernels": [], "note": "ncu was not found (PATH, CUDA_HOME, HARNESS_NCU)"}
    counted = Counters(kernels=(KernelCounters(name="relu_kernel", duration_us=41.9, registers=32),), launches=3,
                       seconds=9.5)
    ncu = profile_record(eval_result().model_copy(update={"counters": counted}), ProblemContext())["ncu"]
    assert (ncu["kernels"][0]["name"], ncu["kernels"][0]["registers"], ncu["launches"], ncu["note"]) == (
        "relu_kernel", 32, 3, None)
