"""How busy this machine's cores are with other processes' work right now, seen from the parent (`harness doctor`).

It is the measure the judge takes around every timing on the cpu target (child/observe.py, whose docstring
gives the formula): the busy ticks of the cores this process may run on (cpu_stat.cpu_ticks, the judge's own
reading), less its own, as a share of the cores' time over a short interval. A share above
cpu_ceiling.CONTENDED_SHARE is what flags a result `contended`: what doctor measures is what the results timed now
would get.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.cpu_stat import cpu_ticks
from harness.eval.cpu_ceiling import CONTENDED_SHARE

INTERVAL_S = 0.5  # ticks are 10 ms: over 0.5 s on 2 cores the share is good to 1 %


@dataclass(frozen=True)
class CoresLoad:
    foreign: float  # share of the cores' time other processes used
    cores: int
    wall_s: float

    @property
    def contended(self) -> bool:
        return self.foreign > CONTENDED_SHARE


def _proc_stat() -> str | None:
    try:
        return Path("/proc/stat").read_text()
    except OSError:
        return None


def _own_ticks(hz: int) -> int:
    times = os.times()
    return round((times.user + times.system) * hz)


def measure(interval_s: float = INTERVAL_S, read: Callable[[], str | None] = _proc_stat) -> CoresLoad | None:
    """Other processes' share of the usable cores over `interval_s`; None where /proc/stat cannot tell (not Linux).
    `read` gives /proc/stat's text (tests hand it theirs)."""
    cpus = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    first, own, start = read(), _own_ticks(hz), time.perf_counter()
    time.sleep(interval_s)
    second, own_end, wall = read(), _own_ticks(hz), time.perf_counter() - start
    before, after = (cpu_ticks(text, cpus) if text else None for text in (first, second))
    if before is None or after is None or wall <= 0:
        return None
    foreign = max(0, after[0] - before[0] - (own_end - own))
    return CoresLoad(foreign=min(1.0, foreign / (len(cpus) * wall * hz)), cores=len(cpus), wall_s=wall)
