"""`harness mcp` on the cpu target, driven by the mcp SDK's own client over stdio: the tools are listed, a problem
shown, an honest, a wrong and an exploit candidate evaluated with `harness eval`'s verdicts, bad calls answered as
tool errors while the server goes on, the budget reported and spent, and every evaluation stored under the run."""
import asyncio
import json
import os
import re
import socket
import subprocess
import sys

import pytest

from harness.store import Store
from harness.workloads import mask_numbers
from tests.conftest import LEAN_RELU, REPO, SOLUTIONS, json_lines, run_cli, share_builds

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

PROBLEM = "cpu/relu"
WRONG = LEAN_RELU.replace("lean_relu", "lean_identity").replace("a[i] > 0.f ? a[i] : 0.f", "a[i]")  # no max
EXPLOIT = SOLUTIONS / "exploit" / "cpu_public_shape_fast_path.py"  # right on the public shapes only
CANDIDATES = {"honest": LEAN_RELU, "wrong": WRONG, "exploit": EXPLOIT.read_text()}
EVAL_FLAGS = ["--target", "cpu", "--eval-timeout", "120", "--timing-budget", "1", "--trials", "2"]
SERVER_FLAGS = [*EVAL_FLAGS, "--budget-calls", "4"]


def text(answer) -> str:
    return "".join(block.text for block in answer.content if getattr(block, "type", "") == "text")


async def session(results: str) -> dict:
    """One client session: every call the tests look at, in order, with its answer."""
    env = {"HARNESS_RESULTS_DIR": results, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-never-passed-on"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "harness", "mcp", "--run", "agent",
                                                                 *SERVER_FLAGS], env=env, cwd=str(REPO))
    answers: dict = {}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            answers["tools"] = await client.list_tools()
            answers["listed"] = await client.call_tool("list_problems", {"problems": "cpu"})
            answers["shown"] = await client.call_tool("show_problem", {"problem": PROBLEM})
            answers["unknown"] = await client.call_tool("evaluate", {"problem": "cpu/relux", "source": LEAN_RELU})
            answers["fragment"] = await client.call_tool("evaluate", {"problem": PROBLEM, "source": "x = 1\n"})
            answers["no_gpu"] = await client.call_tool("sanitize", {"problem": PROBLEM, "source": LEAN_RELU})
            for name, source in CANDIDATES.items():
                answers[name] = await client.call_tool("evaluate", {"problem": PROBLEM, "source": source})
            answers["profiled"] = await client.call_tool("profile", {"problem": PROBLEM, "source": LEAN_RELU})
            answers["spent"] = await client.call_tool("evaluate", {"problem": PROBLEM, "source": LEAN_RELU})
            answers["after"] = await client.call_tool("list_problems", {"problems": PROBLEM})
    return answers


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    results = share_builds(tmp_path_factory.mktemp("mcp"), tmp_path_factory)
    return asyncio.run(asyncio.wait_for(session(str(results)), timeout=1500)), results


@pytest.fixture(scope="module")
def by_eval(tmp_path_factory):
    """The same three files through `harness eval --json`, in a results directory of its own."""
    files = tmp_path_factory.mktemp("files")
    paths = []
    for name, source in CANDIDATES.items():
        (files / f"{name}.py").write_text(source)
        paths.append(files / f"{name}.py")
    results = share_builds(tmp_path_factory.mktemp("eval"), tmp_path_factory)
    done = run_cli("eval", "--json", "--problem", PROBLEM, "--results-dir", results, *EVAL_FLAGS, *paths)
    assert done.returncode == 0, done.stderr
    return dict(zip(CANDIDATES, json_lines(done.stdout)))


def test_the_tools_are_listed_and_a_problem_is_shown_as_the_model_is_asked_it(answers):
    answers, _ = answers
    assert {tool.name for tool in answers["tools"].tools} == {"list_problems", "show_problem", "evaluate", "profile",
                                                                "sanitize"}
    listed = json.loads(text(answers["listed"]))
    assert PROBLEM in {p["problem"] for p in listed["problems"]} and listed["target"] == "cpu"
    shown = json.loads(text(answers["shown"]))
    assert [m["role"] for m in shown["messages"]] == ["system", "user"]
    assert "class Model(nn.Module)" in shown["messages"][1]["content"]
    assert {w["workload"] for w in shown["public_workloads"]} == {"default", "one_row"}
    assert shown["held_out_workloads"] == 2
    prompt = shown["messages"][1]["content"]
    assert "not multiples of 32" not in prompt and not re.search(r"(?<![\d.])(999|1001)(?![\d.])", prompt)  # held out
    assert shown["budget"] == {"calls_used": 0, "calls_left": 4, "seconds_used": 0.0, "seconds_left": 3600.0}


def test_the_verdicts_are_harness_evals(answers, by_eval):
    answers, _ = answers
    expected = {"honest": "correct", "wrong": "incorrect", "exploit": "incorrect"}
    for name, status in expected.items():
        assert not answers[name].is_error, text(answers[name])
        verdict = json.loads(text(answers[name]))["verdict"]
        assert (verdict["status"], by_eval[name]["status"]) == (status, status), (verdict["error"], by_eval[name])
        # each evaluation draws its own secret inputs: the same words, other counts and places
        assert mask_numbers(verdict["error"] or "") == mask_numbers(by_eval[name]["error"] or "")
    feedback = json.loads(text(answers["wrong"]))["feedback"]
    assert feedback.startswith("Your kernel ran but its output is wrong")


def test_a_held_out_workload_is_told_by_its_description_alone(answers, by_eval):
    answers, _ = answers
    answer = json.loads(text(answers["exploit"]))
    failed = [w for w in answer["verdict"]["workloads"] if w["status"] == "incorrect"]
    assert failed and all(set(w) == {"about", "public", "timed", "status"} for w in failed if not w["public"])
    held_out = [w for w in by_eval["exploit"]["workloads"] if not w["public"]]
    sizes = {str(v) for w in held_out for v in w["values"].values() if isinstance(v, int) and v > 1}
    said = answer["verdict"]["error"] + answer["feedback"] + (answer["verdict"]["output"] or "")
    assert sizes and not {s for s in sizes if re.search(rf"(?<![\d.]){s}(?![\d.])", said)}, said
    assert "held-out workload" in answer["feedback"]


def test_profile_says_where_the_time_goes_from_the_stored_evaluation(answers):
    answers, _ = answers
    profiled = json.loads(text(answers["profiled"]))
    assert profiled["status"] == "correct" and profiled["runtime_ms"] > 0
    kernels = profiled["kernels"]
    assert kernels and kernels[0]["owner"] == "candidate" and kernels[0]["name"] == "relu", kernels
    assert 0 < sum(k["share"] for k in kernels) <= 1.0001
    light = profiled["speed_of_light"]
    if light["bytes"] is not None:  # the eager baseline is stored only where it was measured clean (not on a busy CI)
        assert light["bytes"] == 2 * 4 * 4096 * 1024 and light["achieved_gbs"] > 0  # fp32 in and out
    assert profiled["ncu"] == {"kernels": [], "note": "the cpu target has no Nsight Compute"}
    assert profiled["budget"]["calls_used"] == 4


def test_bad_calls_are_tool_errors_and_the_server_goes_on(answers):
    answers, _ = answers
    assert answers["unknown"].is_error and "unknown problem 'cpu/relux'" in text(answers["unknown"])
    assert "did you mean cpu/relu" in text(answers["unknown"])
    assert answers["fragment"].is_error and "defines no ModelNew" in text(answers["fragment"])
    assert answers["no_gpu"].is_error and "sanitize cannot run here" in text(answers["no_gpu"])
    assert "needs the cuda target" in text(answers["no_gpu"])  # refused before it spent a call
    assert answers["spent"].is_error and "4 calls are spent" in text(answers["spent"])
    after = json.loads(text(answers["after"]))
    assert after["budget"]["calls_used"] == 4 and after["budget"]["calls_left"] == 0
    assert after["budget"]["seconds_used"] > 0


def test_every_evaluation_is_stored_under_the_run(answers):
    _, results = answers
    with Store(results / "harness.db") as store:
        (run,) = [r for r in store.runs() if r.name == "agent"]
        assert run.kind == "mcp"
        # the honest candidate twice: evaluated, then profiled (served from the store)
        assert sorted(r.status for r in store.results("agent")) == ["correct", "correct", "incorrect", "incorrect"]


def test_the_same_tools_are_served_over_streamable_http(tmp_path):
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "harness", "mcp", "--transport", "http", "--port", str(port),
                               *SERVER_FLAGS], cwd=REPO, stderr=subprocess.DEVNULL,
                              env={**os.environ, "HARNESS_RESULTS_DIR": str(tmp_path)})

    async def listed() -> tuple[set[str], dict]:
        for _ in range(300):  # while the server starts (refused connections, as the SDK raises them)
            try:
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_), \
                        ClientSession(read, write) as client:
                    await client.initialize()
                    tools = {tool.name for tool in (await client.list_tools()).tools}
                    return tools, json.loads(text(await client.call_tool("list_problems", {"problems": PROBLEM})))
            except Exception as exc:  # noqa: BLE001
                failed = exc
                assert server.poll() is None, f"the server ended: {server.returncode}"
                await asyncio.sleep(0.2)
        raise AssertionError(f"harness mcp --transport http never answered: {failed!r}")

    try:
        tools, listed_problems = asyncio.run(listed())
    finally:
        server.terminate()
        server.wait(30)
    assert tools == {"list_problems", "show_problem", "evaluate", "profile", "sanitize"}
    assert [p["problem"] for p in listed_problems["problems"]] == [PROBLEM]
