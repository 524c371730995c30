"""The judge's clock over its stages, and its turns on the GPU: the seconds it waits for the GPU's lock
(device_lock.py) are taken out of the stage they fall in and reported as `device_wait`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from harness.child.remote import Remote
from harness.device_lock import DeviceLock
from harness.figures import StageSeconds

_clock = time.perf_counter  # bound before any candidate code runs: stage times cannot be patched


class StageClock:
    """The judge's stages, each from its own start (the last one's end) to its own end, less the seconds Triton
    compiled and autotuned in the runner meanwhile (figures of their own: build time)."""

    def __init__(self, remote: Remote):
        self.remote = remote
        self.seconds: dict[str, float] = {}
        self.jit: dict[str, float] = {}  # the runner's Triton seconds so far
        self.start = _clock()
        self.device_wait = 0.0  # waiting for the GPU's lock, taken out of the stage it fell in

    def waited(self, seconds: float) -> None:
        self.start += seconds
        self.device_wait += seconds

    def ends(self, name: str) -> None:
        jit_before = sum(self.jit.values())
        self.jit = self.remote.jit()
        end = _clock()
        self.seconds[name] = end - self.start - (sum(self.jit.values()) - jit_before)
        self.start = end

    def figures(self) -> StageSeconds:
        return StageSeconds(**{f"{name}_s": seconds for name, seconds in self.seconds.items()},
                            compile_s=self.jit.get("compile"), autotune_s=self.jit.get("autotune"),
                            device_wait_s=round(self.device_wait, 4) or None)


class DeviceTurns:
    """When the judge has the GPU, beside other evaluations' checks or alone. `lock` None: the device is this
    evaluation's alone, and every turn is taken at once."""

    def __init__(self, lock: DeviceLock | None, stages: StageClock):
        self.lock, self.stages = lock, stages

    @contextmanager
    def on_device(self, alone: bool) -> Iterator[None]:
        """The block with the GPU shared with other checks, or alone; the wait for it is no stage's."""
        if self.lock is None:
            yield
            return
        waited = self.lock.waited_s
        with self.lock.alone() if alone else self.lock.shared():
            self.stages.waited(self.lock.waited_s - waited)
            yield

    @contextmanager
    def alone_awhile(self) -> Iterator[None]:
        """Within a shared turn, the GPU alone for a block (the poisoned calls), its waits no stage's."""
        if self.lock is None:
            yield
            return
        waited = self.lock.waited_s
        try:
            with self.lock.alone_awhile():
                self.stages.waited(self.lock.waited_s - waited)
                waited = self.lock.waited_s
                yield
        finally:
            self.stages.waited(self.lock.waited_s - waited)  # taking the shared turn back
