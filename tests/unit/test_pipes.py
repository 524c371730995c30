"""`harness CMD | head`: a reader that stops early ends every command quietly, with exit status 0.

Each command runs as a real child process whose stdout is a real pipe. The pipe is shrunk to one page, so an output
longer than that meets the closed read end while it is still being written (the reader takes one line and closes);
a command whose output is shorter meets a pipe closed before it starts, so the error it must absorb does happen."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

from harness.store import Store
from tests.conftest import FIXTURES, REPO

F_SETPIPE_SZ = 1031  # Linux's fcntl to set a pipe's capacity (Python exposes it from 3.10 on some builds only)
RUNS = 300           # stored runs: `runs` and `report` then print far more than a page


def piped(*args: str, lines: int) -> tuple[int, str, bytes]:
    """Run `harness ARGS` into a pipe whose reader takes `lines` lines (0: closes before the command starts)
    and then closes it; the exit status, stderr, and what the reader got."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    reader = os.fdopen(read_end, "rb")
    if lines == 0:
        reader.close()
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args], stdout=write_end, stderr=subprocess.PIPE,
                            env=env, cwd=REPO)
    os.close(write_end)
    got = b"".join(reader.readline() for _ in range(lines))
    if lines:
        reader.close()
    _, stderr = proc.communicate(timeout=300)
    return proc.returncode, stderr.decode(), got


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipes")
    with Store(path / "harness.db") as store:
        for i in range(RUNS):
            store.ensure_run(f"run-{i:03d}", kind="eval", target="cpu", device_name="cpu", model=None)
    return path


STORED = "RESULTS"  # stands for the results directory of stored runs


@pytest.mark.parametrize("command", [
    ["runs", "--json", "--results-dir", STORED],
    ["runs", "--results-dir", STORED],
    ["report", "--json", "--results-dir", STORED],
    ["report", "--results-dir", STORED],
    ["problems", "list", "--json"],
    ["problems", "list"],
    ["config", "show", "--json"],
    ["config", "show"],
], ids=lambda c: " ".join(c[:-2] if STORED in c else c))
def test_a_reader_that_takes_one_line_ends_the_command_quietly(results, command):
    status, stderr, got = piped(*(str(results) if arg == STORED else arg for arg in command), lines=1)
    assert got.endswith(b"\n") and got.strip()  # the line the reader asked for came whole
    assert status == 0 and "Traceback" not in stderr and "Broken pipe" not in stderr, stderr


@pytest.mark.parametrize("command", [
    ["doctor", "--json"],
    ["cache", "--json"],
    ["--version"],
    ["eval", "--json", "--target", "cpu", "--problem", "cpu/relu", str(FIXTURES / "problems" / "relu.py")],
], ids=lambda c: c[0])
def test_a_pipe_closed_before_the_first_line_ends_the_command_quietly(command, tmp_path):
    where = [] if command[0] == "--version" else ["--results-dir", str(tmp_path)]
    status, stderr, _ = piped(*command, *where, lines=0)
    assert status == 0 and "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
