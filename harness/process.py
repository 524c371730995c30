"""Fresh child processes for untrusted code: no secrets in the environment, a session of their own, killed with
that session on timeout, output captured to a log file; in a sandbox (sandbox.py) where the caller gives a policy.

No child outlives the parent, however the parent ends (kill -9 included): each is started holding the parent's
lifeline, the read end of a pipe whose write end the parent alone holds and never writes. The kernel closes that end
when the parent's last thread is gone, so a child reads end-of-file then, and kills its session: itself and the
compilers and workers it started (a session, not a process group: ninja starts each compiler in a group of its own).
A pipe rather than PR_SET_PDEATHSIG: that signal follows the thread that forked (builds and evaluations start theirs
on worker threads), not the process, and its SIGKILL would leave the child's compilers running. In a sandbox, the
command holds the line through the launcher and its init, and the namespace dies with the command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from harness import freeze, sandbox

# Set for the children that must yield the cores (child/__main__.py: SCHED_IDLE, which compilers inherit): builds
# beside evaluations on a GPU, so that a judge or runner woken mid-evaluation runs at once (at a niceness it waited
# out a compiler's time slice, read as hidden_work).
YIELD_ENV = "HARNESS_YIELD_CORES"

# The descriptor of the parent's lifeline in a child (spawn sets it, die_with_parent takes it).
LIFELINE_ENV = "HARNESS_LIFELINE"
# Environment variables whose names match are never passed to a child (API keys, tokens, ...).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
CHILD = (sys.executable, "-m", "harness.child")  # the one entry of every child process
PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_running: set[int] = set()  # sessions of children still running, for kill_all()
# Every child started, newest last: the GPU contention check (gpu_load.py) tells our processes from others' by
# these, including children that have exited since they used the GPU.
started: deque[int] = deque(maxlen=4096)
_lifeline: tuple[int, int] | None = None  # (read end, write end), made at the first spawn
_lifeline_made = threading.Lock()  # builds and evaluations spawn from several threads at once


def lifeline() -> int:
    """The read end of this process's lifeline (the module's docstring says why). Neither end is inherited by a
    child unless passed to it, as spawn passes the read end."""
    global _lifeline
    with _lifeline_made:
        if _lifeline is None:
            _lifeline = os.pipe()  # only a fork without exec would copy the write end; the parent never does one
        return _lifeline[0]


def spawn(argv: list[str], *, env: dict[str, str], pass_fds: tuple[int, ...] = (), **popen) -> subprocess.Popen:
    """Popen a child of ours in a session of its own, holding this process's lifeline: the child calls
    die_with_parent (harness.child does, first thing) and ends, its session with it, when this process does."""
    line = lifeline()
    return subprocess.Popen(argv, env={**env, LIFELINE_ENV: str(line)}, pass_fds=(*pass_fds, line),
                            start_new_session=True, **popen)


def die_with_parent() -> None:
    """In a child spawned by the parent: watch the lifeline on a thread of its own and, once it breaks, kill this
    process's session. Nothing where there is no line (started by hand, or a grandchild: the variable is taken out of
    the environment here, so a compiler's own harness.child, nvcc's, is left to the session that holds it)."""
    line = os.environ.pop(LIFELINE_ENV, None)
    if line is None or not line.isdigit():
        return
    try:
        os.set_inheritable(int(line), False)  # the compilers need no line of their own: they are in the session
    except OSError:  # not open here: a variable without its descriptor
        return
    threading.Thread(target=_watch, args=(int(line),), name="lifeline", daemon=True).start()


def _watch(line: int) -> None:
    with contextlib.suppress(OSError):
        os.read(line, 1)  # nothing is ever written: it returns at end of file, once the parent is gone
    kill_session(os.getpid())  # this process (its session's leader, as spawn starts it) and all it started


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent's environment minus anything that looks like a secret, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    # The child must import this very harness, installed or not.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class ChildOutcome:
    returncode: int | None
    timed_out: bool
    duration_s: float

    def describe(self) -> str:
        if self.timed_out:
            return f"killed after the {self.duration_s:.0f} s timeout"
        if self.returncode is not None and self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"child process killed by {name}"
        return f"child process exited with status {self.returncode}"


def child_argv(args: list[str], policy: sandbox.Policy | None, prefix: tuple[str, ...] = ()) -> list[str]:
    """`python -m harness.child ARGS...` (behind `prefix`, a tool that runs it: inside the sandbox), behind the
    sandbox's launcher when there is a policy."""
    argv = [*prefix, *CHILD, *args]
    return sandbox.command(policy, argv) if policy else argv


def kill_session(pid: int) -> None:
    """Kill a child started in a session of its own (spawn), with every process of that session: its group first (so
    nothing in it forks again), then the other groups (ninja starts each compiler in a group of its own), the calling
    process last where it is the child itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if pid != os.getpid():
            os.killpg(pid, signal.SIGKILL)
    me = os.getpid()
    for other in in_session(pid):
        if other != me:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(other, signal.SIGKILL)
    if pid == me:
        os.killpg(0, signal.SIGKILL)


def in_session(sid: int) -> list[int]:
    """The PIDs of session `sid` (/proc/PID/stat's sixth field, after the command's name, which may hold anything)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if len(fields) > 3 and int(fields[3]) == sid:
            found.append(int(name))
    return found


def run_child(args: list[str], *, env: dict[str, str], timeout_s: float, log_path: Path,
              cwd: Path | None = None, policy: sandbox.Policy | None = None) -> ChildOutcome:
    """Run `python -m harness.child ARGS...` in a session of its own; stdout+stderr go to log_path."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = spawn(child_argv(args, policy), env=env, stdin=subprocess.DEVNULL, stdout=log,
                     stderr=subprocess.STDOUT, cwd=cwd)
        timed_out = False
        with track(proc):  # on leaving, also reaps what the child left in its session (threads, daemons, compilers)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
    return ChildOutcome(None if timed_out else proc.returncode, timed_out, time.monotonic() - start)


@contextlib.contextmanager
def track(proc: subprocess.Popen):
    """Register a child started in its own session so kill_all() reaches it; kill its session on leaving."""
    _running.add(proc.pid)
    started.append(proc.pid)
    try:
        yield proc
    finally:
        kill_session(proc.pid)
        proc.wait()
        _running.discard(proc.pid)


def kill_all() -> None:
    """Kill every running child's session (on Ctrl-C, so worker threads stop waiting)."""
    for pid in list(_running):
        kill_session(pid)


class EvalChild:
    """An evaluation's two processes, started before they are needed: the judge (`serve TARGET FD STOP`), which
    reads one spec (a JSON line) on stdin, evaluates it and writes the report, and the runner (`run TARGET FD`), the
    only one that runs the candidate's code, each in its own work directory (and sandbox, with a policy), joined by
    one Unix socket pair (and, where the runner is stopped while the reference is timed, the judge joined to the
    runner's sandbox init by another). Used once, like any child."""

    def __init__(self, target: str, judge: tuple[dict[str, str], Path, sandbox.Policy | None],
                 runner: tuple[dict[str, str], Path, sandbox.Policy | None], judge_fds: tuple[int, ...] = (),
                 runner_prefix: tuple[str, ...] = ()):
        """`judge`, `runner`: the environment, work directory and sandbox policy (or None) of each; `judge_fds`:
        descriptors the judge alone inherits (the GPU's lock: device_lock.py); `runner_prefix`: a tool the runner
        runs under (compute-sanitizer), which may take a while to end after it."""
        judge_end, runner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        judge_ends, runner_ends, freezer = [judge_end], [runner_end], "-"
        self.work, self.runner_work = judge[1], runner[1]
        env, work, policy = runner
        if policy and target in freeze.TARGETS:  # the judge's line to the runner's sandbox init, which stops the
            freezer_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # runner (freeze.py)
            runner = (env, work, dataclasses.replace(policy, control_fd=init_end.fileno()))
            judge_ends.append(freezer_end)
            runner_ends.append(init_end)
            freezer = str(freezer_end.fileno())
        try:
            judge_env, judge_work, judge_policy = judge
            self.proc = self._start(child_argv(["serve", target, str(judge_end.fileno()), freezer], judge_policy),
                                    judge_env, judge_work, judge_ends, stdin=True, fds=judge_fds)
            runner_env, runner_work, runner_policy = runner
            self.runner = self._start(child_argv(["run", target, str(runner_end.fileno())], runner_policy,
                                                 runner_prefix), runner_env, runner_work, runner_ends, stdin=False)
        finally:
            for end in (*judge_ends, *runner_ends):
                end.close()
        self.runner_code: int | None = None
        self.runner_grace_s = TOOL_GRACE_S if runner_prefix else RUNNER_GRACE_S
        self.ended: dict[str, float] = {}  # wall-clock times (time.time, as file times are) each one was reaped

    @staticmethod
    def _start(argv: list[str], env: dict[str, str], work: Path, ends: list[socket.socket], stdin: bool,
               fds: tuple[int, ...] = ()) -> subprocess.Popen:
        with open(work / "eval.log", "wb") as log:
            proc = spawn(argv, env=env, pass_fds=(*(end.fileno() for end in ends), *fds),
                         stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         cwd=work)
        _running.add(proc.pid)
        started.append(proc.pid)
        return proc

    def run(self, spec_json: str, timeout_s: float) -> ChildOutcome:
        """Hand the judge the spec and wait until it exits (both killed with their sessions after `timeout_s`); the
        runner's exit status is kept in runner_code (None: it was still running when the judge was done)."""
        start = time.monotonic()
        timed_out = False
        stdin = self.proc.stdin
        assert stdin is not None  # the judge starts with a pipe for the spec (_start's stdin=True)
        try:
            stdin.write(f"{spec_json}\n".encode())
            stdin.close()
        except BrokenPipeError:  # it died while starting; its exit status and log say why
            pass
        try:
            self.proc.wait(timeout=timeout_s)
            self.ended["judge"] = time.time()
            self.runner_code = self.runner.wait(timeout=self.runner_grace_s)  # it ends as the judge closes its end
            self.ended["runner"] = time.time()
        except subprocess.TimeoutExpired:
            timed_out = self.proc.returncode is None
        finally:
            self.discard()
        return ChildOutcome(None if timed_out else self.proc.returncode, timed_out, time.monotonic() - start)

    def discard(self) -> None:
        """Kill both sessions (with anything they left running) and reap them."""
        for proc in (self.proc, self.runner):
            kill_session(proc.pid)
            proc.wait()
            _running.discard(proc.pid)


RUNNER_GRACE_S = 2.0
TOOL_GRACE_S = 120.0  # a runner under a tool: the tool's report and teardown come after it


def write_atomic(path: Path, text: str) -> None:
    """Readers see the old file or the whole new one, never half of it."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


LOG_LIMIT = 1 << 20  # what is kept of a child's log (a candidate may print gigabytes)


def read_log(path: Path, limit: int = LOG_LIMIT) -> str:
    """A child's log, at most `limit` bytes of it: its head (the harness's own first lines) and its tail (the
    compiler's errors, the traceback), the middle cut with a note saying how much."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= limit:
            return f.read().decode(errors="replace")
        head = f.read(limit // 16)
        f.seek(size - (limit - len(head)))
        end = f.read()
    cut = size - len(head) - len(end)
    note = f"\n[... harness: {cut} bytes of this log cut ...]\n"
    return head.decode(errors="replace") + note + end.decode(errors="replace")


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])
