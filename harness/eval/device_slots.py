"""Which evaluations may be on one GPU at once: their checks side by side, their poisoned calls and timings one at a
time.

The exclusive parts are the judges' own (device_lock.py); this decides how many of the at most settings.gpu_slots
evaluations the scheduler hands a GPU are let in together. Several only where each one's memory is known and they
fit together in the sharing budget (gpu_load.sharing_budget: also None where the contention check could not tell our
work from another's), so that no candidate runs out of memory because of a neighbour; otherwise one at a time. An
evaluation's memory is learned from the evaluations of its problem before it (MemoryPlan): the first one runs alone.
One that ran beside others and failed for want of memory is evaluated again alone (needs_alone).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from harness.types import EvalResult

CONTEXTS_BYTES = 1 << 30  # the judge's and the runner's CUDA contexts, which their allocators do not count
MARGIN = 1.25             # over the most an evaluation of the problem held: its drawn workloads differ per seed
MIB = 1 << 20


class MemoryPlan:
    """What an evaluation of each problem plans to take: the most its earlier evaluations' judge and runner held
    together (their allocators' peaks), with a margin and the contexts; None until one has been measured."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}
        self.lock = threading.Lock()

    def need(self, problem_sha256: str) -> int | None:
        held = self.held.get(problem_sha256)
        return None if held is None else int(MARGIN * held) + CONTEXTS_BYTES

    def learn(self, problem_sha256: str, result: EvalResult) -> None:
        process = result.figures.process
        if process.judge_memory_mib is None or process.runner_memory_mib is None:
            return  # not timed (it stopped early, holding less), or not a GPU
        held = (process.judge_memory_mib + process.runner_memory_mib) * MIB
        with self.lock:
            self.held[problem_sha256] = max(held, self.held.get(problem_sha256, 0))


@dataclass(eq=False)
class Seat:
    """One evaluation let in: what it planned to take, and whether another ran beside it at any time."""

    need: int | None
    shared: bool = False


class DeviceSlots:
    """The evaluations on one GPU now. `budget()`: the bytes they may take together, or None (one at a time);
    asked each time one wants in, since the contention check learns what it can see as evaluations run."""

    def __init__(self, budget: Callable[[], int | None], slots: int):
        self.budget, self.slots = budget, slots
        self.inside: list[Seat] = []
        self.changed = threading.Condition()

    def admits(self, need: int | None) -> bool:
        if not self.inside:
            return True
        needs = [seat.need for seat in self.inside]
        if need is None or None in needs or len(needs) >= self.slots:
            return False
        budget = self.budget()
        return budget is not None and sum(needs, need) <= budget  # type: ignore[arg-type]

    def enter(self, need: int | None) -> Seat:
        """Wait until an evaluation planning to take `need` bytes (None: not known, so alone) may start beside the
        ones running."""
        seat = Seat(need)
        with self.changed:
            while not self.admits(need):
                self.changed.wait()
            for other in self.inside:
                other.shared = seat.shared = True
            self.inside.append(seat)
        return seat

    def leave(self, seat: Seat) -> None:
        with self.changed:
            self.inside.remove(seat)
            self.changed.notify_all()


def needs_alone(seat: Seat, result: EvalResult) -> bool:
    """Whether a result may owe its verdict to a neighbour: it ran beside another and ran out of device memory, or
    judged against the reference where its float64 truth did not fit. Such an evaluation is made again alone."""
    if not seat.shared:
        return False
    fell_back = result.check is not None and result.check.truth == "reference"
    return fell_back or "out of memory" in (result.error or "").lower()
