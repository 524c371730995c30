"""The disk caches and their cap: finished builds (RESULTS_DIR/cache/builds, one directory per build key), the
kernels Triton compiled for each candidate (RESULTS_DIR/cache/triton, triton_cache.py) and precompiled headers
(pch_root(), one directory per key, ~0.8 GB each, shared by every results directory).

An entry's last use is its directory's modification time: a build served from the cache touches it, a build
that took a PCH asks for it to be touched (fastbuild/maker.py), a build or a PCH made anew writes into it. Pruning
removes the least recently used entries until the total fits the cap, and never one used in the last IN_USE_S
seconds or locked by a build in progress (another harness process may be about to evaluate it)."""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from harness.fastbuild.names import pch_root

IN_USE_S = 3600.0
LOCK = ".harness-lock"  # a build holds it while it builds (build.py), and pruning skips what is held


@dataclass(frozen=True)
class Entry:
    kind: str  # "build", "triton" (a candidate's Triton cache, triton_cache.py) or "pch"
    path: Path
    bytes: int
    last_used: float  # epoch seconds


def _size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def entries(cache_dir: Path) -> list[Entry]:
    """Every cached build of this results directory and every precompiled header, oldest use first."""
    found = []
    for kind, root in (("build", cache_dir / "builds"), ("triton", cache_dir / "triton"), ("pch", pch_root())):
        if root.is_dir():
            found += [Entry(kind, d, _size(d), d.stat().st_mtime) for d in root.iterdir() if d.is_dir()]
    return sorted(found, key=lambda e: e.last_used)


def touch(directory: Path) -> None:
    """Mark a cached entry as used now."""
    try:
        os.utime(directory)
    except OSError:
        pass


def _remove(entry: Entry) -> bool:
    """Remove an entry unless a build holds its lock; True if it went."""
    lock = entry.path / LOCK
    try:
        handle = open(lock, "a") if lock.exists() else None
    except OSError:
        return False
    try:
        if handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        shutil.rmtree(entry.path)
        return True
    except OSError:  # locked by a build in progress, or not ours to remove
        return False
    finally:
        if handle:
            handle.close()


def prune(cache_dir: Path, max_bytes: int, now: float | None = None) -> list[Entry]:
    """Remove the least recently used entries until the caches fit in max_bytes (entries in use stay, even
    above the cap). Returns what was removed."""
    now = time.time() if now is None else now
    found = entries(cache_dir)
    total = sum(e.bytes for e in found)
    removed = []
    for entry in found:
        if total <= max_bytes:
            break
        if now - entry.last_used < IN_USE_S:
            continue
        if _remove(entry):
            removed.append(entry)
            total -= entry.bytes
    return removed
