"""`harness run/generate` with a model: bad input and server failures give clear errors and exit codes,
and nothing the key could leak into; a run whose server failed is the one --resume continues. No builds happen
here: every case stops before a candidate exists, or gets an answer without code."""
import json
import os
import re
import sqlite3

import pytest

from tests.conftest import json_lines, run_cli
from tests.openai_server import FakeOpenAI, Reply

KEY = "sk-errors-test-9d8c7b6a5f4e"


@pytest.fixture
def results(tmp_path):
    return tmp_path


def generate(results, *args, env=None):
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run_cli("generate", "--target", "cpu", "--problem", "cpu/relu", "--results-dir", results / "r",
                   "--solutions-dir", results / "s", *args, env={**clean, **(env or {})})


def test_a_refused_key_exits_2_without_echoing_it(results):
    with FakeOpenAI(lambda body: Reply(status=401, content=f"Incorrect API key provided: {KEY}")) as server:
        proc = generate(results, "--model", "m", "--base-url", server.base_url, env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 2 and "refused the credentials" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert KEY not in proc.stderr + proc.stdout
    assert all(KEY.encode() not in f.read_bytes() for f in (results / "r").glob("harness.db*"))
    # Nothing half-written: no run without a single answer.
    assert run_cli("runs", "--json", "--results-dir", results / "r").stdout.strip() == ""


def test_an_unknown_model_exits_2(results):
    with FakeOpenAI(lambda body: Reply(status=404, content="model not found")) as server:
        proc = generate(results, "--model", "nope", "--base-url", server.base_url)
    assert proc.returncode == 2 and "Check --model and --base-url" in proc.stderr
    assert run_cli("runs", "--json", "--results-dir", results / "r").stdout.strip() == ""


def test_a_server_that_keeps_failing_exits_1_and_says_how_to_continue(results):
    with FakeOpenAI(lambda body: Reply(status=503)) as server:
        proc = generate(results, "--model", "m", "--base-url", server.base_url, "--max-retries", "1")
        assert len(server.received) == 2
    assert proc.returncode == 1 and "gave up after 2 attempts" in proc.stderr and "--resume" in proc.stderr


def test_no_key_for_the_openai_api(results):
    proc = generate(results, "--model", "gpt-5")
    assert proc.returncode == 2 and "OPENAI_API_KEY is not set" in proc.stderr


def test_a_local_server_needs_no_key(results):
    with FakeOpenAI(lambda body: "no code today") as server:
        proc = generate(results, "--model", "m", "--base-url", server.base_url, "--json", "--price-out", "10")
    assert proc.returncode == 0, proc.stderr
    assert server.authorization == ["Bearer no-key"]
    assert '"status": "no_code"' in proc.stdout
    assert "1 answers (0 from the response cache)" in proc.stderr and "cost $0.0000" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--run", "../escape"], "bad run name"),
    (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--prompts-dir", "."], "lacks cpu/system.j2"),
    (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--problems", "cpu/rleu"], "did you mean"),
])
def test_bad_input_exits_2(results, args, message):
    proc = generate(results, *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_nothing_to_resume(results):
    proc = run_cli("run", "--resume", "--target", "cpu", "--results-dir", results)
    assert proc.returncode == 2 and "has no `harness run` run" in proc.stderr


def run_model(results, server, *args):
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run_cli("run", "--target", "cpu", "--results-dir", results / "r", "--solutions-dir", results / "s",
                   "--base-url", server.base_url, "--max-retries", "0", "--json", *args, env=clean)


def stored_runs(results) -> dict[str, dict]:
    return {r["run"]: r for r in json_lines(run_cli("runs", "--json", "--results-dir", results / "r").stdout)}


def evaluations(results, run: str) -> list[tuple]:
    with sqlite3.connect(results / "r" / "harness.db") as db:
        return db.execute("SELECT id, created_at, result_json FROM evaluations WHERE run = ? ORDER BY id",
                          (run,)).fetchall()


def test_resume_continues_the_run_whose_server_failed_not_an_earlier_one(results):
    """The run is stored as it starts: a server that fails on the first request leaves it unfinished, and
    --resume (no name) continues that run under its own name, against a server that works; the finished run
    before it is neither asked nor evaluated again."""
    with FakeOpenAI(lambda body: "no code today") as working:
        earlier = run_model(results, working, "--model", "scripted", "--problem", "cpu/sum_dim1", "--run", "earlier")
        assert earlier.returncode == 0, earlier.stderr
        before = evaluations(results, "earlier")
        with FakeOpenAI(lambda body: Reply(status=503)) as failing:
            failed = run_model(results, failing, "--model", "scripted", "--problems", "cpu/relu,cpu/softmax")
        assert failed.returncode == 1, failed.stderr
        message = " ".join(failed.stderr.split())
        name = re.search(r"continue this run with: harness run --resume --run (\S+)", message).group(1)
        runs = stored_runs(results)
        assert runs[name]["finished"] is False and runs[name]["answers"] == 0 and runs["earlier"]["finished"]

        asked = len(working.received)
        resumed = run_model(results, working, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert len(working.received) == asked + 2  # the failed run's two problems, nothing of `earlier`
    runs = stored_runs(results)
    assert runs[name]["finished"] is True and runs[name]["answers"] == 2 and runs[name]["evaluations"] == 2
    assert evaluations(results, "earlier") == before  # nothing earlier re-timed, re-judged or re-stored
    assert {r["problem"] for r in json.loads(resumed.stdout)["problems"]} == {"cpu/relu", "cpu/softmax"}

    again = run_model(results, working, "--resume")  # every run finished: nothing to resume, and what to type
    assert again.returncode == 2 and "went through all its turns" in again.stderr, again.stderr


def test_resuming_a_run_of_which_nothing_was_stored_says_so_and_what_to_type(results):
    with FakeOpenAI(lambda body: Reply(status=401, content="bad key")) as refused:  # bad input: nothing kept
        proc = run_model(results, refused, "--model", "scripted", "--problem", "cpu/relu", "--run", "mine")
        assert proc.returncode == 2, proc.stderr
        proc = run_model(results, refused, "--run", "mine", "--resume")
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "nothing of run 'mine' is stored" in message, message
    assert "`harness run --run mine --model MODEL`" in message
