"""`harness run/generate` with a model: bad input and server failures give clear errors and exit codes,
and nothing the key could leak into. No builds happen here: every case stops before a candidate exists."""
import os

import pytest

from tests.conftest import run_cli
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
