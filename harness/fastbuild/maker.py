"""The precompiled headers a build asked for, made after it (pch.py says why a build child never makes
them; host_pch.py makes nvcc's host header the same way): each by `python -m harness.child pch DIR`,
sandboxed to DIR, the key's own directory. What a request
says is a candidate's word: the child checks that the command is the key's, so a forged request can only make
the PCH of its own flags; a retire request costs later builds time, never a verdict; a use request (a build
took an existing PCH) marks its last use for the caches' cap.

A PCH made here is sealed (seal.py) over the identity of its file: inode, size, modification and change times
(the kernel sets the change time on every write, rename or utime, and no user process can set it back), so the
check costs a stat, not a hash of 0.8 GB. A build child is told which PCHs passed (PCH_TRUSTED_ENV) and takes no
other; one that fails (changed since, or made outside the harness) is made again after that build."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from harness import sandbox, seal
from harness.fastbuild.names import HOST_PCH_FILE, HOST_PCH_PREFIX, PCH_COMMAND, PCH_FAILED, PCH_FILE, pch_root
from harness.process import YIELD_ENV, child_env, run_child, write_atomic

KEY = re.compile(r"[0-9a-f]{32}")
MAX_REQUESTS = 4  # a load_inline call asks for two (torch/extension.h's, nvcc's host text's): two calls' worth
PCH_TIMEOUT_S = 600.0
SEAL_FILE = "pch.seal"
logger = logging.getLogger(__name__)


class Confinement(Protocol):
    """The sandbox a maker runs in (eval/confine.py's Confinement): one that may write `scratch` alone."""

    def policy(self, scratch: Path) -> sandbox.Policy: ...


def make_requested_pchs(requests: Path, confinement: Confinement | None, yield_cores: bool = False) -> None:
    """What a build asked for, after it: marks and retirements at once, then the PCHs to make, side by side (a
    load_inline with torch's header in its `.cu` asks for two, each one compiler's time, 1-2 minutes on an H200).
    `yield_cores`: the makers run under SCHED_IDLE, as builds beside evaluations on a GPU do."""
    makes = _requested_makes(requests, act=True)
    if makes:
        with ThreadPoolExecutor(len(makes)) as pool:
            list(pool.map(lambda key: _make(pch_root() / key, makes[key], confinement, yield_cores), makes))


def _requested_makes(requests: Path, act: bool) -> dict[str, list]:
    """The PCHs a build's request file asks to be made (key -> command); with `act`, its marks and retirements
    are carried out on the way."""
    if not requests.is_file():
        return {}
    taken, makes = 0, dict[str, list]()
    with open(requests, "rb") as f:
        text = f.read(64 << 10).decode(errors="replace")  # a build child wrote it: read no more than requests need
    for line in text.splitlines()[:100]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or taken >= MAX_REQUESTS:
            continue
        if _is_key(record.get("use")):  # a forged one only keeps a PCH from the cap a while longer
            taken += 1
            if act:
                with contextlib.suppress(OSError):  # its last use, read by the caches' cap (eval/cache.py)
                    os.utime(pch_root() / record["use"])
        elif _is_key(record.get("retire")):
            taken += 1
            if act:
                _retire(pch_root() / record["retire"], str(record.get("why", ""))[:500])
        elif _is_key(record.get("make")) and isinstance(record.get("command"), list):
            taken += 1
            makes.setdefault(record["make"], record["command"])
    return makes


class MadeLater:
    """The PCHs a batch's builds ask for, made apart from the build that asked, so that its candidate is evaluated
    without waiting for them. On a GPU (`defer` False) at once, on a thread of their own beside the evaluations (the
    makers yielding the cores, as builds do), one build's requests at a time, and the builds after them take them
    once made and sealed. On the cpu target (`defer`), where nothing may run beside an evaluation, at finish(),
    after the batch's evaluations: a first batch shows its results before the header's ~40 s are spent."""

    def __init__(self, defer: bool = False) -> None:
        self.defer = defer
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pch")
        self.pending: list[Future] = []
        self.deferred: list[tuple[Path, Confinement | None]] = []

    def add(self, requests: Path, confinement: Confinement | None) -> None:
        if self.defer:
            self.deferred.append((requests, confinement))
        else:
            self.pending.append(self.pool.submit(make_requested_pchs, requests, confinement, True))

    def wanted(self) -> int:
        """How many PCHs the deferred requests ask for that are not made yet (what finish() will make)."""
        keys = {key for requests, _ in self.deferred for key in _requested_makes(requests, act=False)}
        return sum(1 for key in keys if not sealed(pch_root() / key) and not (pch_root() / key / PCH_FAILED).exists())

    def finish(self) -> None:
        """Make what was deferred, and wait for what is being made (a PCH saves each later build of this machine its
        header's parse), saying so where it is not done; a failure costs later builds time, never a verdict."""
        for requests, confinement in self.deferred:
            self.pending.append(self.pool.submit(make_requested_pchs, requests, confinement, False))
        self.deferred = []
        if not self.defer and not all(future.done() for future in self.pending):
            logger.warning("harness: finishing the precompiled headers this batch's builds asked for (later builds "
                           "with the same flags read them instead of parsing torch's headers)")
        self.pool.shutdown()
        for future in self.pending:
            if (failure := future.exception()) is not None:
                logger.warning("harness: making a precompiled header failed: %s", failure)

    def abandon(self) -> None:
        """Ctrl-C or a failure: start nothing more (the makers running are killed with every child)."""
        self.deferred = []
        self.pool.shutdown(wait=False, cancel_futures=True)


def _is_key(value) -> bool:
    return isinstance(value, str) and KEY.fullmatch(value) is not None


def _retire(directory: Path, why: str) -> None:
    if directory.is_dir() and not (directory / PCH_FAILED).exists():
        write_atomic(directory / PCH_FAILED, f"retired: {why}\n")


def _make(directory: Path, command: list, confinement: Confinement | None, yield_cores: bool) -> None:
    if (directory / PCH_FAILED).exists() or sealed(directory) or not _clear_unsealed(directory):
        return
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / PCH_COMMAND, json.dumps(command))
    env = child_env({"CUDA_VISIBLE_DEVICES": "", **({YIELD_ENV: "1"} if yield_cores else {})})
    run_child(["pch", str(directory)], env=env, timeout_s=PCH_TIMEOUT_S,
              log_path=directory / "make.log", cwd=directory,
              policy=confinement.policy(directory) if confinement else None)
    if _made(directory):
        seal_pch(directory)


def _made(directory: Path) -> bool:
    return (directory / PCH_FILE).is_file() or (directory / HOST_PCH_FILE).is_file()


def _clear_unsealed(directory: Path) -> bool:
    """Remove a PCH that fails its seal, unless a maker holds the directory's lock (pch.py): False then."""
    if not _made(directory) and not (directory / HOST_PCH_PREFIX).exists():
        return True
    with open(directory / "lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        shutil.rmtree(directory / PCH_FILE.parent, ignore_errors=True)
        for name in (HOST_PCH_PREFIX, HOST_PCH_FILE):
            (directory / name).unlink(missing_ok=True)
        return True


def _identity(directory: Path) -> list[str]:
    """The made files' identities: torch/extension.h's PCH and its header link, or nvcc's host text and its PCH."""
    host = (directory / HOST_PCH_FILE).exists()
    parts = [directory.name]
    for path in [directory / HOST_PCH_PREFIX, directory / HOST_PCH_FILE] if host else [directory / PCH_FILE]:
        info = path.stat()
        parts += [str(info.st_ino), str(info.st_size), str(info.st_mtime_ns), str(info.st_ctime_ns)]
    header = directory / PCH_FILE.with_suffix("")
    return [*parts, os.readlink(header) if header.is_symlink() else "no link"]


def seal_pch(directory: Path) -> None:
    write_atomic(directory / SEAL_FILE, seal.seal(*_identity(directory)))


def sealed(directory: Path) -> bool:
    try:
        return seal.verify((directory / SEAL_FILE).read_text().strip(), *_identity(directory))
    except OSError:
        return False


def trusted_keys() -> list[str]:
    """The PCHs a build may use now: made by the harness and unchanged since."""
    root = pch_root()
    if not root.is_dir():
        return []
    return sorted(d.name for d in root.iterdir() if _is_key(d.name) and sealed(d) and not (d / PCH_FAILED).exists())
