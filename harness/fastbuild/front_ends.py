"""The parent's grant of a second core to a build, for nvcc's two front ends side by side (nvcc_split.py)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from harness.facts import meminfo_bytes, usable_cores


class FrontEnds:
    """Which builds may run nvcc's host and device front ends at once (nvcc_split.py). On a `.cu` that reads
    torch's headers that takes its longer front end's time instead of both (cudafe++ 29 s and cicc 29 s, one after
    the other, on this project's 2-core machine), for a second core and about 3 GB more memory (cicc held 3.1 GB,
    cudafe++ 2.3 GB) over that time. So a build gets it only while its second process has a core nobody else
    wants: fewer processes than cores, counting this process's builds and the splits granted (the load average
    lags a wave of builds that start together) or the machine's load, whichever is more, and the memory free for
    every split granted."""

    MEMORY = 3 << 30  # what one split may add
    RESERVE = 8 << 30  # left free for everything else

    def __init__(self):
        self.lock = threading.Lock()
        self.running = self.splits = 0

    @contextlib.contextmanager
    def build(self, gains: bool) -> Iterator[bool]:
        """Held for one build: whether it may split (only one that `gains`, a `.cu` expected to read torch's
        headers, is granted it)."""
        with self.lock:
            self.running += 1
            split = gains and self._room()
            self.splits += split
        try:
            yield split
        finally:
            with self.lock:
                self.running -= 1
                self.splits -= split

    def _room(self) -> bool:
        busy = max(self.running + self.splits, os.getloadavg()[0])
        free = meminfo_bytes("MemAvailable")
        enough = free is not None and free >= self.RESERVE + (self.splits + 1) * self.MEMORY
        return busy + 1 <= usable_cores() and enough


FRONT_ENDS = FrontEnds()  # this process's builds, whichever batch or command started them
