"""The machine's own measurements, kept per user beside the precompiled headers: the device's peaks and each
problem's baselines belong to the machine, not to a results directory, so a new results directory (a second
experiment, a test) does not measure them again, and a baseline one directory measured can be confirmed by another.

It is a results store of its own (store.py: the same tables, rows sealed with the same per-user key) holding only
peaks and baselines; each results store keeps its own copy of what it uses, which is what reports read. Children
never write it: the sandbox leaves them nothing writable but their scratch directory.

Its rows are kept under the machine's identity, not the device's name alone (identity): a CPU model's name says
nothing of how many of its cores a container or virtual machine is given, or of its memory, and a home directory
can outlive the machine (an image, a shared home). A measurement is served only to the machine it was made on;
the torch version is in every key already.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.store import BaselineKey, Store, StoreError
from harness.types import Baseline, Peaks

logger = logging.getLogger(__name__)

MEASUREMENTS_ENV = "HARNESS_MEASUREMENTS"  # the file; "off": none (every results directory measures its own)


def measurements_path() -> Path | None:
    if os.environ.get(MEASUREMENTS_ENV):
        return None if os.environ[MEASUREMENTS_ENV] == "off" else Path(os.environ[MEASUREMENTS_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kernel-harness" / "measurements.db"


def identity(device_name: str, target: str) -> str:
    """The name a device's measurements are kept under in the machine's store: on the cpu target its name with the
    cores this process may use, their cgroup quota and the memory; a GPU's name (its own peaks do not depend on
    the host's cores)."""
    if target != "cpu":
        return device_name
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        memory_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    except (AttributeError, ValueError, OSError):  # no sysconf, or no such name on this system
        memory_gib = 0
    return f"{device_name} | {cores} cores, quota {_cpu_quota()}, {memory_gib} GiB"


def _cpu_quota() -> str:
    """The cgroup v2 CPU quota ("max" where there is none, as cpu.max writes it; "unknown" off cgroup v2)."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return "unknown"
    return "max" if quota == "max" else f"{int(quota) / int(period):g}"


class MachineStore(Store):
    """The machine's store: a Store whose peaks and baselines are kept under the machine's identity (identity())."""

    def add_baseline(self, key: BaselineKey, baseline: Baseline) -> None:
        super().add_baseline((key[0], identity(key[1], key[2]), *key[2:]), baseline)

    def baselines(self, problem_sha256: str, device_name: str, target: str, torch_version: str,
                  dtype: str) -> dict[str, Baseline]:
        return super().baselines(problem_sha256, identity(device_name, target), target, torch_version, dtype)

    def add_peaks(self, device_name: str, target: str, torch_version: str, peaks: Peaks) -> None:
        super().add_peaks(identity(device_name, target), target, torch_version, peaks)

    def peaks(self, device_name: str, target: str, torch_version: str) -> Peaks | None:
        return super().peaks(identity(device_name, target), target, torch_version)


@contextmanager
def machine_store() -> Iterator[Store | None]:
    """The machine's store, or None where there is none (switched off, or a home that cannot hold it: then each
    results directory measures for itself, as it would without this cache)."""
    path = measurements_path()
    try:
        store = MachineStore(path) if path is not None else None
    except StoreError as exc:
        if os.environ.get(MEASUREMENTS_ENV):  # asked for by name: say why it is not used
            logger.warning("harness: %s=%s cannot be used (%s): each results directory measures its own peaks "
                           "and baselines; set it to a file that can be created, or to off", MEASUREMENTS_ENV,
                           os.environ[MEASUREMENTS_ENV], exc)
        store = None
    try:
        yield store
    finally:
        if store is not None:
            store.close()
