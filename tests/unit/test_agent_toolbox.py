"""harness/agent: the budget an agent spends, what its answers may tell of held-out workloads, and the calls that
are refused before anything runs (the whole server through the mcp SDK: tests/integration/test_mcp_cpu.py)."""
import threading

import pytest

from harness.agent.budget import Budget, BudgetSpent
from harness.agent.toolbox import Serving, Toolbox, ToolError, agent_record
from harness.config import load_settings
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
