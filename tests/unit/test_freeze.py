"""The judge stops the candidate's processes while it times the reference (harness/freeze.py): a real sandbox, real
spinning threads and processes, their CPU time read from outside through /proc."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness import sandbox
from harness.child.observe import process_ticks
from harness.freeze import STOPPED, Freezer
from harness.process import child_env

# Two spinning threads, a spinning child and its spinning grandchild (which a first stop may miss: it is forked
# again and again); says so in scratch/ready, then spins until killed.
SPINNERS = """
import os, sys, threading, time

def spin():
    x = 0
    while True:
        x += 1

def forker():  # a new short-lived spinning process every few ms: stopping must catch the newest too
    while True:
        if os.fork() == 0:
            end = time.monotonic() + 0.005
            while time.monotonic() < end:
                pass
            os._exit(0)
        os.wait()

if os.fork() == 0:
    if os.fork() == 0:
        forker()
    spin()
for _ in range(2):
    threading.Thread(target=spin, daemon=True).start()
open(os.path.join(sys.argv[1], "ready"), "w").close()
spin()
"""


@pytest.fixture
def spinners(tmp_path: Path):
    """The sandboxed spinners, the judge's Freezer on their init, and a way to read their CPU time from outside."""
    if (reason := sandbox.probe()) is not None:
        pytest.skip(f"the sandbox does not work on this machine: {reason}")
    judge_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    policy = sandbox.Policy(tmp_path, control_fd=init_end.fileno())
    argv = [sys.executable, "-c", textwrap.dedent(SPINNERS), str(tmp_path)]
    proc = subprocess.Popen(sandbox.command(policy, argv), env=child_env(), start_new_session=True,
                            pass_fds=(init_end.fileno(),))
    init_end.close()
    freezer = Freezer(judge_end.detach())
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "ready").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the spinners did not start"
            time.sleep(0.01)
        yield freezer, lambda: inside(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def inside(launcher: int) -> dict[int, tuple[int, set[str]]]:
    """Every process in the launcher's sandbox but its init, seen from outside: its CPU ticks and its threads'
    states."""
    namespace = os.readlink(f"/proc/{launcher}/ns/pid_for_children")
    found = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{name}/status").read_text()
            nspid = next(line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:"))
            if os.readlink(f"/proc/{name}/ns/pid") != namespace or nspid[-1] == "1":
                continue
            states = {Path(f"/proc/{name}/task/{tid}/stat").read_text().rpartition(")")[2].split()[0]
                      for tid in os.listdir(f"/proc/{name}/task")}
            found[int(name)] = (process_ticks(Path(f"/proc/{name}/stat").read_text()), states)
    return found


def total_ticks(seen: dict) -> int:
    return sum(ticks for ticks, _ in seen.values())


def test_nothing_of_the_candidate_runs_while_stopped(spinners):
    freezer, seen = spinners
    with freezer.stopped():
        before = seen()
        time.sleep(0.5)
        after = seen()
    assert len(before) >= 3  # the spinner, its child, the forker (and maybe one forked process)
    assert all(states <= STOPPED for _, states in before.values()), before
    assert set(after) == set(before), "a process started while they were stopped"
    assert total_ticks(after) == total_ticks(before)
    assert freezer.stopped_calls == 1 and freezer.running_calls == 0
    time.sleep(0.5)  # continued: they spin again
    assert total_ticks({pid: seen().get(pid, (0, set())) for pid in before}) > total_ticks(after)


def test_stopping_again_and_again(spinners):
    # 200 stops: a fork whose child was listed too late left a process running after a stop (in two CI runs of 20
    # stops, and in 5 of 400 once on two loaded cores)
    freezer, seen = spinners
    running = []
    for _ in range(200):
        with freezer.stopped():
            now = seen()
            running += [now] if not all(states <= STOPPED for _, states in now.values()) else []
    assert running == [], (len(running), running[:3], freezer.running_calls)
    assert freezer.stopped_calls == 200 and freezer.running_calls == 0


def test_no_sandbox_or_a_sandbox_gone_stops_nothing_and_fails_nothing():
    free = Freezer(None)
    with free.stopped():
        pass
    assert free.stopped_calls == 0
    judge_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    init_end.close()  # the runner and its init are gone
    gone = Freezer(judge_end.detach())
    with gone.stopped():
        pass
    assert gone.stopped_calls == 0 and gone.sock is None


# What a candidate would try to reach the init's end of the socket pair (and send stop/continue out of turn): a
# socket among its own descriptors, or the init's through /proc/1/fd.
REACH = """
import json, os, socket, sys

found = {"own": [], "init": [], "denied": []}
for fd in os.listdir("/proc/self/fd"):
    target = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
    if target.startswith("socket:"):
        found["own"].append(target)
try:
    names = os.listdir("/proc/1/fd")
except OSError as exc:
    names = [str(n) for n in range(64)]
    found["listing"] = type(exc).__name__
for name in names:
    try:
        with socket.socket(fileno=os.open(f"/proc/1/fd/{name}", os.O_RDWR)) as s:
            s.send(b"c")
            found["init"].append(name)
    except PermissionError:
        found["denied"].append(name)
    except OSError:
        pass
print(json.dumps(found))
"""


def test_the_candidate_cannot_reach_the_init_s_end(tmp_path: Path):
    if (reason := sandbox.probe()) is not None:
        pytest.skip(f"the sandbox does not work on this machine: {reason}")
    judge_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    policy = sandbox.Policy(tmp_path, control_fd=init_end.fileno())
    argv = [sys.executable, "-c", textwrap.dedent(REACH)]
    with subprocess.Popen(sandbox.command(policy, argv), env=child_env(), start_new_session=True,
                          pass_fds=(init_end.fileno(),), stdout=subprocess.PIPE, text=True) as proc:
        init_end.close()
        found = json.loads(proc.communicate(timeout=60)[0])
    assert found["own"] == [] and found["init"] == [], found
    assert str(policy.control_fd) in found["denied"], found  # not dumpable, and capabilities it dropped
