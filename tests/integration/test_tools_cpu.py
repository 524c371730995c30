"""`harness run --tools N` on the cpu target: the local OpenAI-compatible server, scripted to call tools, drives a
turn through evaluate (a wrong candidate, then the honest one, then a call past the turn's budget) and then answers;
the answer is evaluated as without tools, the exchange is stored with the turn, its tokens and tool time counted,
and the report's conversation view shows the calls."""
import json

import pytest

from harness.completions import Completion
from harness.report.details import report_details
from harness.report.leaderboard import run_board
from harness.store import Store
from tests.conftest import LEAN_RELU, run_cli, share_builds
from tests.openai_server import FakeOpenAI, Reply, fenced

WRONG = LEAN_RELU.replace("lean_relu", "lean_identity").replace("a[i] > 0.f ? a[i] : 0.f", "a[i]")  # no max


def respond(body: dict) -> Reply | str:
    told = [m for m in body["messages"] if m["role"] == "tool"]
    if not body.get("tools"):
        return Reply(status=400, content="this scripted model only answers with tools offered")
    if not told:
        return Reply(tool_calls=[("evaluate", {"source": WRONG})])
    if len(told) == 1:  # told it is wrong: the honest one, and one more call than the turn has left
        return Reply(tool_calls=[("evaluate", {"source": LEAN_RELU}), ("evaluate", {"source": LEAN_RELU})])
    return fenced(LEAN_RELU, "Evaluated: correct.")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    results = share_builds(tmp_path_factory.mktemp("tools"), tmp_path_factory)
    with FakeOpenAI(respond) as server:
        done = run_cli("run", "--target", "cpu", "--model", "scripted", "--base-url", server.base_url,
                       "--problems", "cpu/relu", "--tools", "2", "--run", "tooled", "--results-dir", results,
                       "--solutions-dir", results / "solutions", "--eval-timeout", "120", "--timing-budget", "1",
                       "--trials", "2", "--json", env={"OPENAI_API_KEY": "sk-tools-test-key-0123456789"})
        assert done.returncode == 0, done.stderr[-3000:]
        return done, server.answered, results, server.httpd.server_address[1]


def turn_completion(results) -> Completion:
    with Store(results / "harness.db") as store:
        (turn,) = store.turns("tooled").values()
        return turn.completion


def test_the_turn_calls_evaluate_within_its_budget_then_its_answer_is_evaluated(run):
    done, requests, results, _ = run
    assert [r["tool_choice"] for r in requests] == ["auto", "auto", "none"]
    assert {t["function"]["name"] for r in requests for t in r["tools"]} == {"evaluate", "profile"}
    steps = turn_completion(results).tool_steps
    assert [json.loads(s.arguments)["source"] for s in steps] == [WRONG, LEAN_RELU, LEAN_RELU]
    first, second = (json.loads(s.result) for s in steps[:2])
    assert (first["verdict"]["status"], second["verdict"]["status"]) == ("incorrect", "correct")
    assert first["feedback"].startswith("Your kernel ran but its output is wrong")
    assert (first["budget"]["calls_left"], second["budget"]["calls_left"]) == (1, 0)
    assert steps[2].error and "tool calls are spent" in steps[2].result and not steps[:2][0].error
    told = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert told == [s.result for s in steps]  # what the model was told is what is stored
    assert "3 tool calls" in done.stderr and "in tools (run tooled-tools)" in done.stderr
    (row,) = json.loads(done.stdout)["problems"]  # the board holds the answer alone, not the calls' candidates
    assert (row["problem"], row["candidates"], row["statuses"]) == ("cpu/relu", 1, {"correct": 1}), row


def test_tokens_and_tool_time_count_every_request_of_the_exchange(run):
    _, requests, results, _ = run
    completion = turn_completion(results)
    assert completion.usage.prompt_tokens == sum(len(json.dumps(r["messages"])) // 4 for r in requests)
    assert completion.attempts == 3 and completion.tool_s > 0 and completion.text.startswith("Evaluated")


def test_the_calls_evaluations_are_a_hidden_run_of_their_own(run):
    _, _, results, _ = run
    with Store(results / "harness.db") as store:
        runs = {r.name: r for r in store.runs()}
        assert runs["tooled-tools"].hidden and runs["tooled-tools"].kind == "tools"
        assert sorted(r.status for r in store.results("tooled-tools")) == ["correct", "incorrect"]
        assert [r.status for r in store.results("tooled")] == ["correct"]


def test_the_report_s_conversation_shows_the_calls(run):
    _, _, results, _ = run
    with Store(results / "harness.db") as store:
        (info,) = [r for r in store.runs() if r.name == "tooled"]
        details = report_details(store, [info], [run_board(store, info)])  # what the page's script reads
    (conversation,) = details["conversations"]
    (turn,) = conversation["turns"]
    assert [step["name"] for step in turn["tools"]] == ["evaluate"] * 3
    assert [step["error"] for step in turn["tools"]] == [False, False, True]
    assert "incorrect" in details["texts"][turn["tools"][0]["result"]]
    page = results / "report.html"
    done = run_cli("report", "--run", "tooled", "--results-dir", results, "--html", page)
    assert done.returncode == 0, done.stderr


def test_a_rerun_replays_the_exchange_without_asking_or_calling_again(run):
    _, _, results, port = run
    with FakeOpenAI(respond, port=port) as server:  # the same URL: a run named again must ask as it did
        again = run_cli("run", "--target", "cpu", "--model", "scripted", "--base-url", server.base_url,
                        "--problems", "cpu/relu", "--tools", "2", "--run", "tooled", "--results-dir", results,
                        "--solutions-dir", results / "solutions", "--json",
                        env={"OPENAI_API_KEY": "sk-tools-test-key-0123456789"})
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.received == []
    with Store(results / "harness.db") as store:
        assert len(store.results("tooled-tools")) == 2
