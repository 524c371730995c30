"""Triton's cache, one per candidate: RESULTS_DIR/cache/triton/<build key>/.

Triton compiles a kernel at its first launch, in the evaluation child, into the cache named by TRITON_CACHE_DIR:
a directory in the child's own scratch, the only place it may write. The parent fills that directory from the
candidate's cache before the evaluation (`stage_in`) and keeps what the evaluation compiled after it (`keep`), so
a candidate evaluated again loads its kernels instead of compiling them again, and no candidate ever reads
kernels another one compiled. The kept copy is sealed (seal.py) and used only while its seal holds; a rebuild of
the candidate (--force) forgets it.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path

from harness import seal
from harness.eval.cache import touch

logger = logging.getLogger(__name__)
SEAL_FILE = ".harness-seal"
LIMIT_BYTES = 256 << 20  # a candidate's compiled kernels are a few megabytes; more is not kept


def directory(cache_dir: Path, build_key: str) -> Path:
    return cache_dir / "triton" / build_key[:32]


def child_cache(work: Path) -> Path:
    """The evaluation child's TRITON_CACHE_DIR (build.extension_env)."""
    return work / "triton" / "cache"


def stage_in(cache_dir: Path, build_key: str, work: Path) -> None:
    """A cache only saves time: failing to copy it (a full disk) costs the evaluation a compile, nothing else."""
    try:
        _stage_in(cache_dir, build_key, work)
    except OSError as exc:
        logger.warning("harness: Triton's cache for %s was not staged: %s", build_key[:12], exc)


def keep(cache_dir: Path, build_key: str, work: Path) -> None:
    """Replace the candidate's cache with what its evaluation's cache holds: regular files only (no links),
    unless they add up to more than LIMIT_BYTES. A failure costs a later evaluation a compile, nothing else."""
    try:
        _keep(cache_dir, build_key, work)
    except OSError as exc:
        logger.warning("harness: Triton's cache for %s was not kept: %s", build_key[:12], exc)


def _stage_in(cache_dir: Path, build_key: str, work: Path) -> None:
    kept = directory(cache_dir, build_key)
    if not kept.is_dir():
        return
    if not seal.directory_sealed(kept, SEAL_FILE):
        shutil.rmtree(kept, ignore_errors=True)
        return
    # Never over a file already there: the runner made Triton's driver there while it started (warm_driver) and
    # has it loaded; the kept copy of that file is the same module.
    shutil.copytree(kept, child_cache(work), ignore=shutil.ignore_patterns(SEAL_FILE), dirs_exist_ok=True,
                    copy_function=_copy_unless_there)
    touch(kept)  # its last use, for the caches' cap (cache.py)


def _copy_unless_there(source: str, target: str) -> None:
    if not os.path.lexists(target):
        shutil.copy2(source, target)


def _keep(cache_dir: Path, build_key: str, work: Path) -> None:
    files = _regular_files(child_cache(work))
    if not files or sum(size for _, size in files) > LIMIT_BYTES:
        return
    kept = directory(cache_dir, build_key)
    fresh = kept.with_name(f"{kept.name}.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    for relative, _ in files:
        target = fresh / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(child_cache(work) / relative, target, follow_symlinks=False)
    seal.seal_directory(fresh, SEAL_FILE)
    shutil.rmtree(kept, ignore_errors=True)
    try:
        fresh.rename(kept)
    except OSError:  # another evaluation of the same candidate kept its copy first
        shutil.rmtree(fresh, ignore_errors=True)


def forget(cache_dir: Path, build_key: str) -> None:
    shutil.rmtree(directory(cache_dir, build_key), ignore_errors=True)


def _regular_files(root: Path) -> list[tuple[Path, int]]:
    """(path relative to root, size) of every regular file under root; what the candidate's process left there is
    untrusted, so links and special files are skipped, never followed."""
    found = []
    for parent, _, names in os.walk(root):  # os.walk does not descend into links to directories
        for name in names:
            path = Path(parent) / name
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                found.append((path.relative_to(root), info.st_size))
    return found
