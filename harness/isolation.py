"""Fresh child processes for untrusted code: no secrets in the environment, own process group,
killed with that group on timeout, output captured to a log file."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Environment variables whose names match are never passed to a child (API keys, tokens, ...).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_running: set[int] = set()  # process groups of children still running, for kill_all()


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


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(args: list[str], *, env: dict[str, str], timeout_s: float, log_path: Path,
              cwd: Path | None = None) -> ChildOutcome:
    """Run `python -m harness.worker ARGS...` in a new process group; stdout+stderr go to log_path."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.worker", *args],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=env, cwd=cwd, start_new_session=True,
        )
        timed_out = False
        with track(proc):  # on leaving, also reaps what the child left in its group (threads, daemons)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
    return ChildOutcome(None if timed_out else proc.returncode, timed_out, time.monotonic() - start)


@contextlib.contextmanager
def track(proc: subprocess.Popen):
    """Register a child started in its own session so kill_all() reaches it; kill its group on leaving."""
    _running.add(proc.pid)
    try:
        yield proc
    finally:
        kill_group(proc.pid)
        proc.wait()
        _running.discard(proc.pid)


def kill_all() -> None:
    """Kill every running child's process group (on Ctrl-C, so worker threads stop waiting)."""
    for pid in list(_running):
        kill_group(pid)


def write_atomic(path: Path, text: str) -> None:
    """Readers see the old file or the whole new one, never half of it."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])
