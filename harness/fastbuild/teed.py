"""What a build printed, read back as it goes to the log: torch's verbose build has ninja write the compilers'
output to descriptor 1 (the build log), and only that output says whose a failure is (blame.py)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

LIMIT = 8 << 20  # what is kept for reading back: a candidate can make the compiler print without end
DRAIN_S = 5.0  # how long what is still in the pipe may take once the block is done


@dataclass
class Printed:
    """Set when the block is left: its output, or None where some was not kept (over LIMIT, or a process that
    outlived the block still holding the pipe)."""

    text: str | None = None


@contextlib.contextmanager
def teed() -> Iterator[Printed]:
    """Descriptor 1 (and 2 where it is the same file, as in a build child, so that their lines keep their order)
    through a pipe, each byte passed on to where it was going as it comes and kept for `Printed.text`."""
    sys.stdout.flush()
    sys.stderr.flush()
    targets = [1, 2] if _same_file(1, 2) else [1]
    try:
        saved = [os.dup(fd) for fd in targets]
        read_end, write_end = os.pipe()
    except OSError:  # no descriptor 1, or none left: the block runs as it is, its output unread
        yield Printed()
        return
    kept, printed = bytearray(), Printed()
    complete = threading.Event()

    def pump() -> None:
        while chunk := os.read(read_end, 1 << 16):
            _write_all(saved[0], chunk)
            kept.extend(chunk[:max(0, LIMIT + 1 - len(kept))])
        complete.set()

    thread = threading.Thread(target=pump, name="build-output", daemon=True)
    for fd in targets:
        os.dup2(write_end, fd)
    os.close(write_end)
    thread.start()
    try:
        yield printed
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, original in zip(targets, saved):
            os.dup2(original, fd)  # the pipe's last write ends of ours: the reader sees its end once the others go
        thread.join(DRAIN_S)
        if complete.is_set():
            os.close(read_end)
            for original in saved:
                os.close(original)
            printed.text = kept.decode(errors="replace") if len(kept) <= LIMIT else None


def _same_file(a: int, b: int) -> bool:
    try:
        first, second = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except OSError:  # where it was going is gone: the build goes on, its output kept here still
            return
