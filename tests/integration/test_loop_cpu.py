"""The LLM loop end to end on the cpu target: a real local server speaking the OpenAI API, the real
openai client, real builds, a real SQLite file. Turn 1 fails to compile; turn 2, after the feedback,
is correct. Then the same run is interrupted with Ctrl-C and resumed without a repeated request."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import REPO, json_lines, run_cli, share_builds
from tests.openai_server import BROKEN, FakeOpenAI, Reply, fenced, problem_of, turn_of

PROBLEMS = ("cpu/relu", "cpu/softmax")
KEY = "sk-loop-test-KEY-4f9a1c2b7e"
# Problem 2's first answer also tries to read the key at import: the static rules reject it unbuilt (the
# corpus tests show the environment holds no key even when no rule stops the read).
LEAKY = "import os\nprint('LEAKED_KEY=' + str(os.environ.get('OPENAI_API_KEY')))\n" + BROKEN
release = threading.Event()  # holds one request of the "interrupted" model until the test lets go
held = threading.Event()


writer_calls: dict[str, int] = {}
writer_lock = threading.Lock()


def respond(body):
    problem, turn = problem_of(body), turn_of(body)
    if body["model"] == "writer":
        with writer_lock:
            writer_calls[problem] = calls = writer_calls.get(problem, 0) + 1
        if calls % 2:
            return "<think>Hmm.</think>I would first profile the reference."
        return fenced(BROKEN)
    if body["model"] == "interrupted" and problem == PROBLEMS[1] and turn == 2 and not held.is_set():
        held.set()
        release.wait(60)
        return Reply(drop=True)
    if turn == 1:
        return fenced(LEAKY if problem == PROBLEMS[1] else BROKEN, "<think>Start simple.</think>First try:")
    draft = fenced("class ModelNew:\n    pass  # draft", "Draft:")
    final = fenced((REPO / "solutions" / "reference" / f"{problem}.py").read_text(), "Fixed the semicolon:")
    return draft + final + "\n```python\n# build flags: -O3\n```\n"


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI(respond) as fake:
        yield fake
    release.set()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("loop")
    share_builds(path / "r", tmp_path_factory)  # its turn-2 answers are reference solutions test_run_cpu builds
    return path


def harness_args(results, server, *extra):
    return ["run", "--target", "cpu", "--problems", ",".join(PROBLEMS), "--results-dir", results / "r",
            "--solutions-dir", results / "solutions", "--base-url", server.base_url, "--timing-budget", "1",
            *extra]


@pytest.fixture(scope="module")
def first_run(server, results):
    proc = run_cli(*harness_args(results, server, "--model", "scripted", "--turns", "2", "--run", "loop", "--json"),
                   env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    return proc


def test_turn_one_fails_to_compile_and_turn_two_is_correct(first_run, server, results):
    board = json.loads(first_run.stdout)
    rows = {row["problem"]: row for row in board["problems"]}
    assert set(rows) == set(PROBLEMS)
    assert rows[PROBLEMS[0]]["statuses"] == {"compile_error": 1, "correct": 1}
    assert rows[PROBLEMS[1]]["statuses"] == {"rejected": 1, "correct": 1}
    contended = {f["problem"] for f in board["flagged"] if "contended" in f["flags"]}  # other processes ran
    for problem, row in rows.items():
        assert problem in contended or (row["best_speedup"] > 0 and "sample1_turn2.py" in row["best_candidate"])
    assert board["summary"]["candidates"] == 4
    assert board["summary"]["fast_p"]["0"] == 1.0 - len(contended) / len(rows), board["flagged"]

    answered = [b for b in server.answered if b["model"] == "scripted"]
    assert len(answered) == 4 and server.authorization[0] == f"Bearer {KEY}"
    # The second turn carries the conversation: the first answer without its <think>, then the feedback
    # with the compiler's own line.
    turn2 = {problem_of(b): b for b in answered if turn_of(b) == 2}
    assert len(turn2) == 2
    messages = turn2[PROBLEMS[0]]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "<think>" not in messages[2]["content"] and "First try" in messages[2]["content"]
    assert "did not build" in messages[3]["content"] and "error: expected" in messages[3]["content"]
    assert "[io]" in turn2[PROBLEMS[1]]["messages"][3]["content"]  # the model learns which rule refused it

    # Every turn is stored with its completion, candidate file and evaluation.
    db = sqlite3.connect(results / "r" / "harness.db")
    turns = db.execute("SELECT problem_id, sample, turn, candidate_path, evaluation_id FROM turns WHERE run = 'loop' "
                       "ORDER BY problem_id, turn").fetchall()
    assert [(t[0], t[1], t[2]) for t in turns] == [(p, 1, k) for p in sorted(PROBLEMS) for k in (1, 2)]
    assert all(t[4] is not None for t in turns)
    for problem, _, turn, path, _ in turns:
        assert path.endswith(f"{problem}/sample1_turn{turn}.py") and (results / "solutions" / "loop").is_dir()


def db_rows(results, query: str) -> list[tuple]:
    with sqlite3.connect(results / "r" / "harness.db") as db:
        return db.execute(query).fetchall()


def test_the_key_reaches_nothing_but_the_server(first_run, results):
    db_bytes = b"".join(f.read_bytes() for f in (results / "r").glob("harness.db*"))
    assert KEY.encode() not in db_bytes
    assert KEY not in first_run.stdout and KEY not in first_run.stderr
    for path in (results / "solutions").rglob("*.py"):
        assert KEY not in path.read_text()
    # The candidate that reads the environment was rejected unbuilt: it never ran.
    (error,) = db_rows(results, "SELECT error FROM evaluations WHERE run = 'loop' AND status = 'rejected'")
    assert "[io]" in error[0] and "os.environ" in error[0]
    logs = [p.read_text() for p in (results / "r" / "cache" / "builds").glob("*/build.log")]
    assert not [line for log in logs for line in log.splitlines() if line.startswith("LEAKED_KEY=")]


def test_the_html_report_follows_each_conversation(first_run, results):
    """The page written from the run the loop stored: each problem's two turns, what each turn sent, the compiler's
    lines of turn 1, and turn 2's candidate with its diff and its kernel marked."""
    import re

    from harness.report.html import unpack

    page = results / "loop.html"
    proc = run_cli("report", "--run", "loop", "--html", page, "--results-dir", results / "r")
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert KEY not in html
    details = unpack(re.search(r'id="report-data">([^<]*)<', html).group(1))
    texts, candidates = details["texts"], details["candidates"]
    shapes = sorted((c["problem"], len(c["turns"])) for c in details["conversations"])
    assert shapes == [(p, 2) for p in sorted(PROBLEMS)]
    conv = next(c for c in details["conversations"] if c["problem"] == PROBLEMS[0])
    first, second = (candidates[t["candidate"]] for t in conv["turns"])
    assert first["status"] == "compile_error" and "error: expected" in texts[first["build"]["log"]]
    assert "did not build" in texts[conv["turns"][1]["asked"]] and "First try" in texts[conv["turns"][0]["answer"]]
    assert second["previous"] == conv["turns"][0]["candidate"] and texts[second["diff"]].startswith("--- turn 1")
    assert second["status"] == "correct" and second["kernels"] and second["runtime"]["quantiles_ms"]


def test_rerunning_a_finished_run_asks_nothing(first_run, server, results):
    before = len(server.received)
    proc = run_cli(*harness_args(results, server, "--model", "scripted", "--turns", "2", "--run", "loop", "--json"),
                   env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    assert len(server.received) == before
    assert json.loads(proc.stdout)["problems"] == json.loads(first_run.stdout)["problems"]
    runs = json_lines(run_cli("runs", "--json", "--results-dir", results / "r").stdout)
    (loop,) = [r for r in runs if r["run"] == "loop"]
    assert loop["model"] == "scripted" and loop["answers"] == 4 and loop["tokens"] > 0 and loop["evaluations"] == 4


def test_interrupted_run_resumes_without_repeating_a_request(first_run, server, results):
    args = harness_args(results, server, "--model", "interrupted", "--turns", "2", "--run", "resumable")
    proc = subprocess.Popen([sys.executable, "-m", "harness", *map(str, args)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": KEY},
                            # as from a terminal: a test session started in the background ignores SIGINT
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert held.wait(600), "the run never reached its second turn"
        time.sleep(0.5)  # the other turn-2 answer is being stored
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "--resume" in err

    proc = run_cli("run", "--resume", "--target", "cpu", "--results-dir", results / "r", "--solutions-dir",
                   results / "solutions", "--base-url", server.base_url, "--json", env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)
    assert board["summary"]["run"] == "resumable"
    assert {r["problem"]: r["statuses"] for r in board["problems"]} == \
        {PROBLEMS[0]: {"compile_error": 1, "correct": 1}, PROBLEMS[1]: {"rejected": 1, "correct": 1}}

    sent = [json.dumps(b, sort_keys=True) for b in server.received if b["model"] == "interrupted"]
    answered = [json.dumps(b, sort_keys=True) for b in server.answered if b["model"] == "interrupted"]
    assert len(answered) == 4 and len(set(answered)) == 4  # every answer paid once
    assert len(sent) == 5  # plus the one request cut off by Ctrl-C, asked again on resume


def test_resume_refuses_other_generation_settings(first_run, results):
    proc = run_cli("run", "--resume", "--model", "other", "--results-dir", results / "r", "--target", "cpu")
    assert proc.returncode == 2 and "drop --model" in proc.stderr
    proc = run_cli("run", "--run", "loop", "--model", "other", "--results-dir", results / "r", "--target", "cpu",
                   "--base-url", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and "other settings" in proc.stderr


def test_generate_writes_candidates_and_reports_no_code(server, results):
    args = ["generate", "--target", "cpu", "--problem", PROBLEMS[0], "--problem", PROBLEMS[1], "--samples", "2",
            "--model", "writer", "--json", "--results-dir", results / "r", "--solutions-dir", results / "solutions",
            "--base-url", server.base_url]
    proc = run_cli(*args, "--run", "gen", env={"OPENAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    assert sorted((line["problem"], line["sample"], line["turn"]) for line in lines) == \
        [(p, s, 1) for p in PROBLEMS for s in (1, 2)]
    for problem in PROBLEMS:
        mine = {line["status"]: line for line in lines if line["problem"] == problem}
        assert set(mine) == {"generated", "no_code"}  # the writer answers one request per problem with prose
        path = mine["generated"]["candidate"]
        assert path.endswith(f"gen/{problem}/sample{mine['generated']['sample']}_turn1.py")
        assert "class ModelNew" in (REPO / path).read_text()
        assert mine["no_code"]["candidate"] is None
        assert mine["no_code"]["reason"] == "the answer has no fenced code block"
    assert not any(line["cached"] for line in lines)

    # Same requests under another run name: all four served from the response cache.
    before = len(server.received)
    again = json_lines(run_cli(*args, "--run", "gen2", env={"OPENAI_API_KEY": KEY}).stdout)
    assert len(server.received) == before and all(line["cached"] for line in again)
    key = lambda line: (line["problem"], line["sample"])  # noqa: E731
    assert [line["status"] for line in sorted(again, key=key)] == [line["status"] for line in sorted(lines, key=key)]
