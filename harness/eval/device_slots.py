"""Which evaluations may be on one GPU at once: their checks side by side, their timings one at a time.

The timing's exclusivity is the judges' own (device_lock.py); this decides how many evaluations the scheduler
hands a GPU together. Several only where each one's memory is known and they fit together in the sharing budget
(gpu_load.sharing_budget: also None where the contention check could not tell our work from another's), so that no
candidate runs out of memory because of a neighbour; otherwise one at a time, as before. An evaluation plans for
the judge's and the runner's copies of the reference's peak (inputs, outputs, intermediates), the float64 truth
beside them, and two CUDA contexts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# Evaluations one GPU is handed at once, at most: 1 until evaluations side by side are measured on a GPU (issue 60:
# throughput before and after, and the contention and judge suites with them); the lock and the planning stand.
SLOTS = 1
CONTEXTS_BYTES = 1 << 30    # the judge's and the runner's CUDA contexts
PEAK_COPIES = 3             # the judge's reference, the runner's candidate, the truth and copies of outputs


def planned_bytes(peak_memory_bytes: int | None) -> int | None:
    """What one evaluation plans to take, from its problem's measured eager peak (None: not known)."""
    return None if peak_memory_bytes is None else PEAK_COPIES * peak_memory_bytes + CONTEXTS_BYTES


class DeviceSlots:
    """The evaluations on one GPU now. `budget()`: the bytes they may take together, or None (one at a time);
    asked each time one wants in, since the contention check learns what it can see as evaluations run."""

    def __init__(self, budget: Callable[[], int | None], slots: int = SLOTS):
        self.budget, self.slots = budget, slots
        self.inside: list[int | None] = []  # each running evaluation's planned bytes
        self.changed = threading.Condition()

    def admits(self, need: int | None) -> bool:
        if not self.inside:
            return True
        if need is None or None in self.inside or len(self.inside) >= self.slots:
            return False
        budget = self.budget()
        return budget is not None and sum(self.inside, need) <= budget  # type: ignore[arg-type]

    def enter(self, need: int | None) -> None:
        """Wait until this evaluation may start beside the ones running."""
        with self.changed:
            while not self.admits(need):
                self.changed.wait()
            self.inside.append(need)

    def leave(self, need: int | None) -> None:
        with self.changed:
            self.inside.remove(need)
            self.changed.notify_all()
