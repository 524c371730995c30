"""No child outlives the harness: a child spawned with the parent's lifeline (process.spawn, die_with_parent) lives
as long as the parent, whichever thread started it, and dies with everything it started once the parent is killed,
in a sandbox or not. Real processes: a parent, its child, the child's own child (a compiler's stand-in)."""
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import sandbox
from tests.conftest import REPO

# The child: holds the line, then waits on a process of its own, as a build child waits on ninja and the compiler,
# which ninja starts in a process group of its own (in the child's session still).
CHILD = ("from harness.process import die_with_parent; die_with_parent(); "
         "import subprocess; subprocess.run(['sleep', '600'], process_group=0)")
# The parent: starts the child from a thread that ends at once (PR_SET_PDEATHSIG would kill the child then), says
# its pid, and waits to be killed.
PARENT = f"""
import sys, threading, time
from pathlib import Path
from harness import sandbox
from harness.process import child_env, spawn
argv = [sys.executable, "-c", {CHILD!r}]
if len(sys.argv) > 1:
    argv = sandbox.command(sandbox.Policy(Path(sys.argv[1])), argv)
started = []
thread = threading.Thread(target=lambda: started.append(spawn(argv, env=child_env())))
thread.start()
thread.join()
print(started[0].pid, flush=True)
time.sleep(600)
"""


def alive_in_session(session: int) -> list[str]:
    """The commands of the live processes of a session (zombies left out: they are dead, waiting to be reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue  # not a process, or gone meanwhile
        state, _, _, sid = stat[stat.rindex(")") + 2:].split()[:4]
        if int(sid) == session and state != "Z":
            found.append(command)
    return found


def wait_for(condition, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
def test_a_child_and_what_it_started_die_with_a_killed_parent(tmp_path, sandboxed):
    if sandboxed and sandbox.probe() is not None:
        pytest.skip(f"no sandbox here: {sandbox.probe()}")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, *([str(tmp_path)] if sandboxed else [])], cwd=REPO,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    child = None
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        # alive while the parent is, though the thread that started it has ended
        assert wait_for(lambda: any(c.startswith("sleep") for c in alive_in_session(child)), 60), \
            alive_in_session(child)
        parent.kill()
        parent.wait()
        assert wait_for(lambda: not alive_in_session(child), 10), alive_in_session(child)
    finally:
        parent.kill()
        parent.wait()
        if child is not None:  # whatever a failure left behind
            with contextlib.suppress(OSError):
                os.killpg(child, signal.SIGKILL)
