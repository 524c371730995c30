"""The cores' busy ticks from /proc/stat's text: one reading for both sides of the process boundary, the judge's
contention measure (child/observe.py) and doctor's (eval/cores_load.py)."""

from __future__ import annotations


def cpu_ticks(stat: str, cpus: set[int]) -> tuple[int, int] | None:
    """(busy, steal) ticks summed over the cpuN lines of /proc/stat for N in `cpus`; None if none is there.
    guest time is already inside user and nice; idle and iowait are not busy."""
    busy = steal = 0
    found = False
    for line in stat.splitlines():
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus):
            continue
        fields = [int(x) for x in rest.split()] + [0] * 8
        user, nice, system, _idle, _iowait, irq, softirq, stolen = fields[:8]
        busy += user + nice + system + irq + softirq + stolen
        steal += stolen
        found = True
    return (busy, steal) if found else None
