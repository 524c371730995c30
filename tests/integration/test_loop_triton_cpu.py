"""`harness run --backend triton` end to end on the cpu target: the prompt asks for Triton, a real local server
speaking the OpenAI API answers, and the answers' kernels run in Triton's interpreter. Turn 1 launches a kernel
that calls a Triton function that does not exist (a compile_error, as on a GPU); turn 2, after the feedback, is
correct, and flagged `interpreted` (an interpreter's time is no speedup)."""
import json

import pytest

from tests.conftest import REPO, json_lines, run_cli
from tests.openai_server import FakeOpenAI, fenced, problem_of, turn_of

PROBLEMS = ("cpu/relu", "cpu/softmax")
ANSWERS = REPO / "tests" / "fixtures" / "solutions" / "triton"


def respond(body):
    answer = (ANSWERS / f"{problem_of(body)}.py").read_text()
    if turn_of(body) == 1:
        return fenced(answer.replace("tl.exp(", "tl.expo(").replace("tl.maximum(", "tl.maximun("), "First try:")
    return fenced(answer, "Fixed the name:")


@pytest.fixture(scope="module")
def triton_run(tmp_path_factory):
    results = tmp_path_factory.mktemp("triton-loop")
    with FakeOpenAI(respond) as server:
        proc = run_cli("run", "--target", "cpu", "--backend", "triton", "--problems", ",".join(PROBLEMS),
                       "--model", "scripted", "--turns", "2", "--run", "tri", "--results-dir", results / "r",
                       "--solutions-dir", results / "solutions", "--base-url", server.base_url,
                       "--timing-budget", "0.5", "--json", env={"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stderr
    return proc, server, results


def test_the_prompt_asks_for_triton(triton_run):
    _, server, _ = triton_run
    first = next(b for b in server.answered if turn_of(b) == 1)
    system, user = first["messages"][0]["content"], first["messages"][1]["content"]
    assert "Triton kernel engineer" in system
    assert "@triton.jit" in user and "Triton's interpreter" in user and "load_inline" not in user


def test_turn_one_fails_and_turn_two_is_correct_but_not_a_speedup(triton_run):
    proc, server, results = triton_run
    board = json.loads(proc.stdout)
    rows = {row["problem"]: row for row in board["problems"]}
    assert set(rows) == set(PROBLEMS)
    for row in rows.values():
        assert row["statuses"] == {"compile_error": 1, "correct": 1}, row
    flagged = {f["problem"]: f["flags"] for f in board["flagged"]}
    assert all("interpreted" in flagged[p] for p in PROBLEMS), flagged
    assert board["summary"]["fast_p"]["0"] == 0.0  # an interpreted result is counted in no rate
    # The kernel that does not compile is a compile_error, and the feedback quotes Triton's own complaint.
    turn2 = [b for b in server.answered if turn_of(b) == 2]
    assert len(turn2) == 2
    for body in turn2:
        feedback = body["messages"][3]["content"]
        assert "did not build" in feedback and "Triton could not compile" in feedback and "has no attribute" in feedback
    runs = json_lines(run_cli("runs", "--json", "--results-dir", results / "r").stdout)
    assert [r["backend"] for r in runs if r["run"] == "tri"] == ["triton"]
