"""Stopping the candidate's processes while the judge times the reference (issue 19, attack 16: a thread of the
candidate's that spins only while its own forward is not running slows the reference alone, and so inflates the
speedup by less than any bound on a slowed reference can tell from noise).

Two ends of one socket pair: the runner's sandbox init (sandbox.py, PID 1 of the runner's PID namespace, which no
candidate code runs in) serves `serve(fd)` in a thread; the judge holds a `Freezer` on the other end. Asked to
stop, the init sends SIGSTOP to every other process of its namespace (the runner and whatever it started) until
every thread of each reads stopped, then answers; asked to continue, it sends SIGCONT and answers. SIGSTOP cannot
be caught, blocked or ignored, and a process cannot leave the namespace, so nothing the candidate started runs
while the reference is timed (work it already queued on a GPU does: the device's, not this file's).

Standard library only: the init loads this file by its path, as the launcher loads sandbox.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import time

# Where the judge stops the runner. Not on the GPU, where the reference is timed by the device's clock: on an H200
# (16 cores), a thread per core spinning whenever the candidate's forward was not running left the reference at
# 0.1302 ms (0.1303 beside an honest relu) and slowed only the candidate (0.53x), as did kernels queued after each
# forward (0.64x). Stopping there cost honest results: the reference's gaps (evaluate.py) lost what the runner's
# side of a timed call costs beyond an empty round trip, and honest relus came within 0.01 ms of timing_disputed.
TARGETS = ("cpu",)
STOP, CONTINUE = b"s", b"c"
# A thread's states that run no code of the candidate's and start no process: stopped (T), stopped by a tracer (t: a
# tracer of the candidate's is stopped too), dead. Uninterruptible sleep (D) is not among them: such a thread stops
# on its way back from the kernel, but a fork sleeping there attaches its child after a pass has listed the processes
# (a process forked during a stop read R with 0 ticks, on a loaded 2-core machine), so a stop waits it out.
STOPPED = frozenset("TtZX")
SLEEPING = "D"
# A stopped thread reads T only once it has been scheduled to take the signal, which a loaded machine delays (50 ms
# was a guess never measured against one). The wait ends as soon as all read stopped, so only a busy machine pays.
STOP_WAIT_S = 2.0


def serve(fd: int) -> None:
    """The init's side: answer stop and continue requests on `fd` until the judge's end closes."""
    with socket.socket(fileno=fd) as sock:
        while True:
            try:
                request = sock.recv(16)
                if request == STOP:
                    sock.send(struct.pack("i", stop_all()))
                elif request == CONTINUE:
                    continue_all()
                    sock.send(CONTINUE)
                else:
                    return
            except OSError:
                return


def stop_all() -> int:
    """SIGSTOP every process of this PID namespace but this one, again for each that still has a thread running,
    until a pass finds every thread stopped and no new process (a fork that returned during the pass: its child was
    not in the pass's list when its parent read stopped), or STOP_WAIT_S is over; returns how many processes still had
    a thread running code then (one only in uninterruptible sleep, e.g. a vfork's parent whose child is stopped, runs
    none). Every process is signalled once whatever its state: one in a system call (D) would run on its return
    without it."""
    deadline = time.monotonic() + STOP_WAIT_S
    signalled: set[int] = set()
    while True:
        others = set(_others())
        states = {pid: _states(pid) for pid in others}
        unstopped = {pid for pid, found in states.items() if not found <= STOPPED}
        for pid in unstopped | (others - signalled):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        signalled |= others
        appeared = not set(_others()) <= others
        if not unstopped and not appeared:  # all stopped, so none can fork any more
            return 0
        if time.monotonic() >= deadline:
            running = [pid for pid in unstopped if not states[pid] <= STOPPED | {SLEEPING}]
            return len(running) or int(appeared)
        time.sleep(0.0001)


def continue_all() -> None:
    for pid in _others():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def _others() -> list[int]:
    me = os.getpid()
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me]


def _states(pid: int) -> set[str]:
    """The states of `pid`'s threads (each one's /proc stat state, after the name); none if it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return set()
    found = set()
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                found.add(f.read().rpartition(b")")[2][1:2].decode())
        except OSError:
            continue
    return found


class Freezer:
    """The judge's side: `with freezer.stopped():` runs its body with the runner's processes stopped. Without a
    socket (no sandbox, so no init to ask) it stops nothing. If the runner's sandbox is gone (the runner ended),
    there is nothing left to stop: the next call to the runner says why."""

    def __init__(self, fd: int | None):
        self.sock = socket.socket(fileno=fd) if fd is not None else None
        self.stopped_calls = 0    # bodies run with the runner's processes stopped
        self.running_calls = 0    # ... with one of them still running a thread after STOP_WAIT_S

    @contextlib.contextmanager
    def stopped(self):
        answer = self._ask(STOP)
        if answer is not None and len(answer) == 4:
            self.stopped_calls += 1
            self.running_calls += struct.unpack("i", answer)[0] > 0
        try:
            yield
        finally:
            if answer is not None:
                self._ask(CONTINUE)

    def _ask(self, request: bytes) -> bytes | None:
        if self.sock is None:
            return None
        try:
            self.sock.send(request)
            answer = self.sock.recv(16)
        except OSError:
            answer = b""
        if not answer:
            self.sock.close()
            self.sock = None
            return None
        return answer
