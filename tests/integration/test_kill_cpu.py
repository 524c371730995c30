"""`kill -9` of `harness run`, twice, then `--resume`: nothing the killed run started outlives it (build children,
compilers, evaluation children, sandbox launchers), and the resumed run ends with each answer evaluated once and no
request paid twice. Real processes throughout: the harness, its children as /proc shows them, the model server, the
SQLite file."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.openai_server import FakeOpenAI, fenced, problem_of

PROBLEMS = ("cpu/relu", "cpu/sum_dim1")  # two quick builds and evaluations, side by side


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    session: int
    started: int  # clock ticks after boot: with the pid, one process even where pids are reused
    state: str
    command: str


def processes() -> dict[int, Proc]:
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command's name, which may hold anything
        found[int(entry.name)] = Proc(int(entry.name), int(fields[1]), int(fields[3]), int(fields[19]), fields[0],
                                      command)
    return found


def tree(root: int) -> list[Proc]:
    """`root` and every process below it now (the sandboxes' included: /proc shows them with this namespace's pids)."""
    table, below, todo = processes(), [], [root]
    while todo:
        pid = todo.pop()
        below += [table[pid]] if pid in table else []
        todo += [p.pid for p in table.values() if p.ppid == pid]
    return below


def survivors(before: list[Proc]) -> list[str]:
    """What is still alive (zombies are dead) of the processes `before`, or in their sessions: what they started
    since (a compiler, a child's child) is in the session of the child that started it."""
    known, sessions = {(p.pid, p.started) for p in before}, {p.session for p in before}
    return [f"{p.pid} {p.command[:150]}" for p in processes().values()
            if p.state != "Z" and ((p.pid, p.started) in known or p.session in sessions)]


def wait_for(condition: Callable[[], object], limit_s: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
            return False
        time.sleep(0.1)
    return True


def answer(body: dict) -> str:
    return fenced((REPO / "solutions" / "reference" / f"{problem_of(body)}.py").read_text())


@pytest.fixture
def server():
    with FakeOpenAI(answer) as fake:
        yield fake


class Harness:
    """`harness run` into one results directory, started as the user starts it, and killed as `kill -9` kills it:
    the process alone, not its group."""

    def __init__(self, tmp_path: Path, server: FakeOpenAI):
        self.tmp, self.server = tmp_path, server
        self.db = tmp_path / "r" / "harness.db"

    def args(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "harness", "run", "--target", "cpu", "--results-dir", str(self.tmp / "r"),
                "--solutions-dir", str(self.tmp / "solutions"), "--base-url", self.server.base_url,
                "--timing-budget", "1", "--run", "killed", *extra]

    def start(self, *extra: str) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-test"}
        return subprocess.Popen(self.args(*extra), cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)

    def evaluations(self) -> int:
        if not self.db.is_file():
            return 0
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5) as db:
            try:
                return db.execute("SELECT COUNT(*) FROM evaluations WHERE run = 'killed'").fetchone()[0]
            except sqlite3.OperationalError:  # no tables yet
                return 0

    def kill_when(self, proc: subprocess.Popen, ready: Callable[[list[Proc]], bool], what: str) -> None:
        """Once the run's process tree is `ready`, kill -9 the harness alone; then nothing of that tree may live."""
        seen: list[Proc] = []

        def caught() -> bool:
            seen[:] = tree(proc.pid)
            return ready(seen)

        if not wait_for(caught, 600, proc):
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"the run ended (exit {proc.returncode}) or took 10 minutes before {what}:\n{err.decode()}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert wait_for(lambda: not survivors(seen), 10), \
            f"after kill -9 of harness run during {what}, still alive:\n" + "\n".join(survivors(seen))


def running(job: str) -> Callable[[list[Proc]], bool]:
    """Whether a child of this job (`python -m harness.child JOB ...`) is among the processes."""
    return lambda procs: any(f"-m harness.child {job} " in p.command for p in procs)


def test_a_run_killed_twice_resumes_with_each_answer_evaluated_once(tmp_path, server):
    harness = Harness(tmp_path, server)
    started = []
    try:
        # 1. during the builds: the build children, their compilers and sandboxes go with the harness
        started.append(harness.start("--model", "scripted", "--problems", ",".join(PROBLEMS)))
        harness.kill_when(started[-1], running("build"), "a build")
        assert harness.evaluations() == 0
        # 2. resumed, then killed again once one answer is evaluated and the next one's judge is up
        started.append(harness.start("--resume"))
        harness.kill_when(started[-1], lambda procs: harness.evaluations() >= 1 and running("serve")(procs),
                          "an evaluation")
        # 3. resumed to the end
        started.append(harness.start("--resume", "--json"))
        out, err = started[-1].communicate(timeout=900)
    finally:
        for proc in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert started[-1].returncode == 0, err.decode()
    board = json.loads(out)
    assert sorted(row["problem"] for row in board["problems"]) == sorted(PROBLEMS)
    assert all(row["candidates"] == 1 and sum(row["statuses"].values()) == 1 for row in board["problems"]), board
    assert board["summary"]["candidates"] == len(PROBLEMS)
    with sqlite3.connect(harness.db) as db:
        evaluations = db.execute("SELECT id, problem_id FROM evaluations WHERE run = 'killed'").fetchall()
        turns = db.execute("SELECT problem_id, evaluation_id FROM turns WHERE run = 'killed'").fetchall()
    assert sorted(problem for _, problem in evaluations) == sorted(PROBLEMS)  # none stored twice
    assert sorted(turns) == sorted((problem, row) for row, problem in evaluations)  # each with its answer's turn
    assert len(server.answered) == len(PROBLEMS)  # each answer asked for once, then replayed from the store
