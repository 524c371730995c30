"""CPU contention and jitter: was something timed on the cpu target with the cores to itself?

Other processes' share of the cores over an interval (Linux; elsewhere nothing is measured):

    busy    = user + nice + system + irq + softirq + steal ticks of the cores this process may run on
              (/proc/stat cpuN lines; steal is time the hypervisor gave the vCPU to someone else)
    own     = user + system ticks of this process, all its threads (/proc/self/stat)
    foreign = (busy_end - busy_start) - (own_end - own_start) - the runner's ticks meanwhile (the judge's peer)
    share   = foreign / (cores x wall seconds x ticks per second)

The parent flags a timing whose share is above eval/cpu_ceiling.CONTENDED_SHARE `contended`: the cores were
not the timing's alone, so its times (and the reference's beside them) say as much about the other
processes as about the kernel.
Ticks are 10 ms (USER_HZ 100): over a 2 s timing stage on 2 cores the share is good to about 1 %.

Idle jitter: a fixed spin of about 1 ms, timed JITTER_SPINS times just before timing; its relative
standard deviation says how steady the clock and the core were. It is recorded, never used to loosen
anything: a timing that does not converge keeps `noisy_timing`.

Everything this module calls is bound when it is imported, before any candidate code runs, and the
evaluation child's Guard watches this module's names (defenses.py).
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from harness.cpu_stat import cpu_ticks
from harness.figures import Contention

JITTER_SPINS = 32
JITTER_SPIN_S = 0.001

_open, _read, _close, _RDONLY = os.open, os.read, os.close, os.O_RDONLY
_clock = time.perf_counter
_affinity = getattr(os, "sched_getaffinity", None)
try:
    _HZ = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):
    _HZ = 100


class Sample(NamedTuple):
    wall: float   # seconds (perf_counter)
    busy: int     # ticks the cores were busy (steal included)
    steal: int    # ticks stolen by the hypervisor
    own: int      # ticks this process used


class Load(NamedTuple):
    foreign: float  # share of the cores' time other processes (or other VMs) used
    steal: float    # of which stolen by the hypervisor
    wall_s: float


def read_text(path: str) -> str | None:
    try:
        fd = _open(path, _RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := _read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        _close(fd)
    return b"".join(chunks).decode(errors="replace")


def process_ticks(stat: str) -> int:
    """utime + stime of /proc/PID/stat (every thread of the process; children not included)."""
    fields = stat.rsplit(")", 1)[1].split()  # the command name may hold spaces and parentheses
    return int(fields[11]) + int(fields[12])


def own_ticks() -> int:
    """This process's ticks so far (0 where /proc cannot tell)."""
    text = read_text("/proc/self/stat")
    try:
        return process_ticks(text) if text else 0
    except (ValueError, IndexError):
        return 0


def usable_cpus() -> set[int]:
    return set(_affinity(0)) if _affinity else set(range(os.cpu_count() or 1))


def sample(cpus: set[int]) -> Sample | None:
    """The counters now; None where /proc is missing (macOS) or unreadable."""
    wall = _clock()
    stat, own = read_text("/proc/stat"), read_text("/proc/self/stat")
    if stat is None or own is None:
        return None
    try:
        ticks = cpu_ticks(stat, cpus)
        own_ticks = process_ticks(own)
    except (ValueError, IndexError):
        return None
    return Sample(wall, ticks[0], ticks[1], own_ticks) if ticks else None


def load_between(start: Sample, end: Sample, cores: int, hz: int = _HZ, peer: int = 0) -> Load | None:
    """Other processes' share of `cores` cores between two samples (see the module's docstring); `peer`: ticks of a
    process that counts as this one (the candidate's runner, beside its judge)."""
    wall = end.wall - start.wall
    capacity = cores * wall * hz
    if capacity <= 0:
        return None
    foreign = max(0, (end.busy - start.busy) - (end.own - start.own) - max(0, peer))
    return Load(foreign=min(1.0, foreign / capacity), steal=min(1.0, max(0, end.steal - start.steal) / capacity),
                wall_s=wall)


def spin_jitter(spins: int = JITTER_SPINS, spin_s: float = JITTER_SPIN_S) -> float | None:
    """Relative standard deviation of the time of a fixed spin of about `spin_s`, timed `spins` times."""
    n = 1000
    while True:  # calibrate: loop iterations for about spin_s
        t = _spin(n)
        if t >= spin_s / 2 or n >= 1 << 26:
            break
        n *= 2
    n = max(1, int(n * spin_s / max(t, 1e-9)))
    times = [_spin(n) for _ in range(spins)]
    mean = sum(times) / len(times)
    if mean <= 0:
        return None
    var = sum((x - mean) ** 2 for x in times) / (len(times) - 1)
    return var ** 0.5 / mean


def _spin(n: int) -> float:
    start = _clock()
    for _ in range(n):
        pass
    return _clock() - start


class Watch:
    """Around a timing on the cpu target: the idle jitter just before, other processes' share across it.

    watch = Watch(target)        # measures the jitter, then takes the first sample
    ...                          # the timing
    figures = watch.stop()
    figures: a Contention's cpu shares (jitter, foreign, steal)."""

    def __init__(self, target: str):
        self.cpus = usable_cpus() if target == "cpu" else set()
        self.jitter = spin_jitter() if self.cpus else None
        self.start = sample(self.cpus) if self.cpus else None

    def stop(self, peer_ticks: int = 0) -> Contention:
        """`peer_ticks`: what the runner used meanwhile (its own count): neither this process's nor another's."""
        if self.start is None:
            return Contention()
        end = sample(self.cpus)
        load = load_between(self.start, end, len(self.cpus), peer=peer_ticks) if end else None
        return Contention(cpu_jitter_share=None if self.jitter is None else round(self.jitter, 5),
                          cpu_foreign_share=None if load is None else round(load.foreign, 5),
                          cpu_steal_share=None if load is None else round(load.steal, 5))
