"""One GPU's timing alone: evaluations check side by side, and each times with nothing else on the device.

A reader-writer lock over two files per GPU, taken with flock: a judge holds it shared while its check runs on the
device (set-up, trials, coverage) and exclusive while it times and while its runner poisons the device's free memory
(which claims all of it for a moment); a parent holds it exclusive while it measures a baseline. Writers go first:
one that wants the device alone takes the gate before it waits for the readers, and readers pass the gate on their
way in, so a stream of checks keeps a timing waiting only for the checks already under way. Every holder has open
file descriptions of its own (flock belongs to the description: inherited ones would be one lock for all), opened by
the parent and passed to a judge; the runner, which holds the candidate, never gets them. A process that dies
releases its locks with its descriptions. The files are per user, so two harness processes on one GPU take turns
too.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

ENV = "HARNESS_DEVICE_LOCK"  # in a judge's environment: "GATE_FD,SHARE_FD", its own descriptions


def lock_dir() -> Path:
    """The user's lock files' directory, made if missing: it exists before any sandbox is built, which hides it
    (eval/confine.py), so that no candidate can take a GPU's lock and hold every other evaluation up."""
    directory = Path(tempfile.gettempdir()) / f"kernel-harness-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


def open_fds(index: int) -> tuple[int, int]:
    """Fresh descriptions of GPU `index`'s lock files (the gate, then the shared/exclusive one), not inherited
    unless passed (pass_fds)."""
    directory = lock_dir()
    gate = os.open(directory / f"gpu{index}.gate", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    share = os.open(directory / f"gpu{index}.share", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    return gate, share


class DeviceLock:
    """One holder's end of a GPU's lock. `waited_s` adds up the seconds spent waiting for it."""

    def __init__(self, gate_fd: int, share_fd: int):
        self.gate, self.share = gate_fd, share_fd
        self.waited_s = 0.0

    @classmethod
    def for_device(cls, index: int) -> DeviceLock:
        return cls(*open_fds(index))

    @classmethod
    def from_env(cls) -> DeviceLock | None:
        """A judge's lock, from the descriptions its parent passed (None: it shares its device with no one)."""
        value = os.environ.get(ENV)
        if not value:
            return None
        gate, share = (int(fd) for fd in value.split(","))
        try:
            os.fstat(gate), os.fstat(share)
        except OSError as exc:  # not passed down (a sandbox that closed them): said, and the device taken unlocked
            print(f"harness: the GPU's lock was not passed to this process ({exc}); timing without it",
                  file=sys.stderr)
            return None
        return cls(gate, share)

    def shared(self) -> AbstractContextManager[None]:
        """The device beside other sharers (a check)."""
        return self._holding(fcntl.LOCK_SH)

    def alone(self) -> AbstractContextManager[None]:
        """The device to this holder alone (a timing, a baseline)."""
        return self._holding(fcntl.LOCK_EX)

    @contextmanager
    def alone_awhile(self) -> Iterator[None]:
        """Within shared(): the device alone for a block, then shared again. The shared hold is let go first (two
        sharers that each took the gate while holding it would wait for each other for good)."""
        fcntl.flock(self.share, fcntl.LOCK_UN)
        try:
            with self._holding(fcntl.LOCK_EX):
                yield
        finally:
            self._take(fcntl.LOCK_SH)

    @contextmanager
    def _holding(self, mode: int) -> Iterator[None]:
        self._take(mode)
        try:
            yield
        finally:
            fcntl.flock(self.share, fcntl.LOCK_UN)

    def _take(self, mode: int) -> None:
        start = time.perf_counter()
        fcntl.flock(self.gate, fcntl.LOCK_EX)  # behind any holder that waits to be alone; alone, no sharer passes
        try:
            fcntl.flock(self.share, mode)
        finally:
            fcntl.flock(self.gate, fcntl.LOCK_UN)
        self.waited_s += time.perf_counter() - start

    def close(self) -> None:
        for fd in (self.gate, self.share):
            try:
                os.close(fd)
            except OSError:
                pass


@contextmanager
def alone_on(index: int | None) -> Iterator[None]:
    """This process has GPU `index` to itself for the block (None: not a GPU, nothing to wait for)."""
    if index is None:
        yield
        return
    lock = DeviceLock.for_device(index)
    try:
        with lock.alone():
            yield
    finally:
        lock.close()
