"""Builds, the parent's side: every distinct candidate source is built once, by a build child
(child/loader.py), in its own directory keyed by a hash of the source and the machine, with the compiler's
full output captured; the verdict (ok, compile_error, timeout, harness_error) and its log are kept in the
directory, so a later run reuses them. A source that builds nothing (Triton, plain PyTorch) needs no build child: its
evaluation imports it first. Also the compiler-log excerpts shown to people and to the model.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.metadata
import logging
import platform
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness import sandbox, seal
from harness.compiler_lines import generated_sources, in_candidate_terms
from harness.eval import triton_cache
from harness.eval.build_cost import NOTHING, TORCH_HEADERS, expected_build_cost
from harness.eval.cache import LOCK, touch
from harness.eval.confine import Confinement
from harness.fastbuild import front_ends
from harness.fastbuild import names as fastbuild
from harness.fastbuild.maker import MadeLater, make_requested_pchs, trusted_keys
from harness.fastbuild.names import PCH_REQUESTS, PCH_REQUESTS_ENV, PCH_RETRY, PCH_TRUSTED_ENV, SPLIT_NVCC_ENV
from harness.markers import (
    CANDIDATE_FILE,
    CANDIDATE_STARTS,
    CAUGHT_BUILD,
    HARNESS_FAILED,
    LOG_FILE,
    MANIFEST_FILE,
    NO_GPU_HINT,
    RESULT_FILE,
    UNIMPORTED_FILE,
)
from harness.process import YIELD_ENV, child_env, read_log, run_child, tail, write_atomic
from harness.types import BuildResult, Candidate, DeviceInfo

logger = logging.getLogger(__name__)
SEAL_FILE = "build.seal"  # the parent's keyed digest of the finished directory (seal.py): checked before reuse

# 2: a PCH keyed by torch's own flags, with the header beside it; harness_error. 3: builds in a sandbox (or keyed
# apart without one), PCHs made by a child of their own, extensions built at evaluation time in its own directory
BUILD_PROTOCOL = 3
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the checkout, or site-packages


@functools.lru_cache(maxsize=1)
def torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "none"


@functools.lru_cache(maxsize=1)
def harness_version() -> str:
    try:
        return importlib.metadata.version("kernel-harness")
    except importlib.metadata.PackageNotFoundError:
        pass
    # A checkout used without installing it (on PYTHONPATH): its own pyproject.toml says the version.
    from harness.config import tomllib
    try:
        project = tomllib.loads((PACKAGE_ROOT / "pyproject.toml").read_text())["project"]
    except (AttributeError, OSError, KeyError, ValueError):  # no parser (3.10 without tomli), no file, no table
        return "unknown"
    return project.get("version", "unknown") if project.get("name") == "kernel-harness" else "unknown"


def build_sha256(candidate: Candidate, device: DeviceInfo, sandboxed: bool = True, accelerated: bool = True) -> str:
    """What makes a built extension reusable: the source and everything it was compiled against. A build made
    without the sandbox is kept apart: a candidate built beside it could have written into it. So is one made
    without build acceleration (fastbuild/): its objects are torch's own, where an accelerated `.cu` carries the
    module id nvcc_split.py gave it, and a build that failed with a precompiled header is not one torch would
    have failed; whoever turns acceleration off asks for torch's build, not a cached faster one."""
    parts = [f"build-protocol={BUILD_PROTOCOL}", f"target={device.target}", f"arch={device.arch}",
             f"torch={torch_version()}", f"python={sys.version_info[:2]}", f"machine={platform.machine()}",
             candidate.sha256, *([] if sandboxed else ["sandbox=off"]), *([] if accelerated else ["acceleration=off"])]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def extension_env(device: DeviceInfo, scratch: Path) -> dict[str, str]:
    """What every child that may build a candidate's kernels needs: torch's extension directory and Triton's
    cache in its own scratch directory (the loader builds elsewhere; this is for what calls torch directly; the
    rest of the file tree is read-only in the sandbox), the pinned CUDA arch, and on the cpu target Triton's
    interpreter (Triton has no CPU backend: its kernels run on CPU tensors there, as TRITON_INTERPRET=1 does)."""
    extra = {"TORCH_EXTENSIONS_DIR": str(scratch / "torch_extensions"), "TRITON_HOME": str(scratch / "triton"),
             "TRITON_CACHE_DIR": str(triton_cache.child_cache(scratch))}
    if device.target == "cpu":
        extra["TRITON_INTERPRET"] = "1"
    if device.arch:
        extra["TORCH_CUDA_ARCH_LIST"] = device.arch
    return extra


def build_env(device: DeviceInfo, directory: Path, max_jobs: int, split_nvcc: bool = False,
              yield_cores: bool = True, accelerate: bool = True) -> dict[str, str]:
    """`yield_cores`: on a GPU, whether the build yields the cores (runs under SCHED_IDLE); a build the device waits
    for with nothing else to do (scheduler.Batch.leads) does not. `accelerate`: the build_acceleration setting,
    said to the child whatever the parent's own environment says (the setting already read it)."""
    extra = {**extension_env(device, directory), "MAX_JOBS": str(max_jobs), fastbuild.ENV: "1" if accelerate else "0"}
    if accelerate:
        extra |= {PCH_REQUESTS_ENV: str(directory / PCH_REQUESTS), PCH_TRUSTED_ENV: ",".join(trusted_keys())}
    if split_nvcc:
        extra[SPLIT_NVCC_ENV] = "1"
    if device.target == "cuda":  # builds run beside evaluations: no GPU for the builder, and the cores theirs first
        extra["CUDA_VISIBLE_DEVICES"] = ""
        if yield_cores:
            extra[YIELD_ENV] = "1"
    return child_env(extra)


_COMPILER_ERROR = re.compile(r"\berror\b[:(]|: error ", re.IGNORECASE)
_EXCEPTION = re.compile(r"^[A-Za-z_.]*(Error|Exception)\b")
_EXT_DIR = re.compile(r"\S*/ext\d+_[^/\s]*/")


def _is_compiler_error(line: str) -> bool:
    return bool(_COMPILER_ERROR.search(line)) and not line.lstrip().startswith(("ninja: build stopped", "FAILED:"))


def final_attempt(log: str) -> str:
    """The log from the last build without the precompiled header on: a failed attempt with it is not
    what the candidate's build did."""
    return log.rsplit(PCH_RETRY, 1)[-1]


def summarize_failure(log: str) -> str:
    """The lines a user (or a model) needs: compiler errors first, else the final exception."""
    log = final_attempt(log)
    lines = log.splitlines()
    errors = [ln.strip() for ln in lines if _is_compiler_error(ln)]
    exception = next((ln.strip() for ln in reversed(lines) if _EXCEPTION.match(ln.strip())), "")
    picked = list(dict.fromkeys(errors))[:6]
    if exception and exception not in picked:
        picked.append(exception)
    if NO_GPU_HINT in log:
        picked.append(NO_GPU_HINT)
    return "\n".join(picked) if picked else tail(log, 8)


def error_lines(log: str, limit: int = 40) -> str:
    """For a model: each error line with the two after it (code and caret), build paths removed."""
    log = final_attempt(log)
    lines = [_EXT_DIR.sub("", line.rstrip()) for line in log.splitlines()]
    keep: set[int] = set()
    for i, line in enumerate(lines):
        if _is_compiler_error(line) or _EXCEPTION.match(line.strip()):
            keep.update(range(i, min(i + 3, len(lines))))
    text = "\n".join(list(dict.fromkeys(lines[i] for i in sorted(keep)))[:limit])
    return text or tail(log, 15)


def log_excerpt(log: str, lines: int = 20) -> str:
    """The end of the compiler's output: the log up to the Python traceback that follows it."""
    log = final_attempt(log)
    cut = log.find("Traceback (most recent call last):")
    head = log[:cut] if cut > 0 else log
    return tail(head, lines)




def _in_answer_lines(log: str, directory: Path, source: str, failed: bool) -> str:
    """A failed build's log (or one whose failed build the candidate caught) with each compiler diagnostic in a
    generated file (ext0_x/main.cpp) given the answer's line too, for whoever reads it to fix the answer
    (compiler_lines.py); the log as it is where that fails: a build's verdict never hangs on it."""
    if not failed and CAUGHT_BUILD not in log:
        return log
    try:
        return in_candidate_terms(log, generated_sources(directory), source)
    except (OSError, ValueError) as exc:
        logger.warning("harness: the build log of %s keeps the generated files' line numbers (%s)", directory, exc)
        return log


@contextlib.contextmanager
def _exclusive(path: Path):
    """A kernel-held lock: released even if this process dies, unlike torch's `lock` file."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cached(directory: Path) -> BuildResult | None:
    """The build kept in `directory`, where there is one and its seal holds."""
    done = directory / RESULT_FILE
    if not done.is_file():
        return None
    if seal.directory_sealed(directory, SEAL_FILE, skip=frozenset({LOCK})):
        touch(directory)  # its last use, for the cache's cap (cache.py)
        return BuildResult.model_validate_json(done.read_text()).model_copy(update={"cached": True})
    logger.warning("harness: the cached build in %s fails its seal check (changed since it was built, or "
                   "made before seals, or under another key): building it again", directory)
    return None


def _clear(directory: Path, cache_dir: Path, key: str) -> None:
    """An empty directory for a new build, but for its lock."""
    (directory / RESULT_FILE).unlink(missing_ok=True)
    (directory / SEAL_FILE).unlink(missing_ok=True)
    for entry in directory.iterdir():  # what an earlier build left: extensions, torch's stale `lock` files
        if entry.name != LOCK:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    triton_cache.forget(cache_dir, key)  # and the kernels Triton compiled for the earlier build


@dataclass(frozen=True)
class BuildOptions:
    """How a build runs, as the run's settings say: its limits, whether it builds again, its sandbox, its speed-ups."""

    timeout_s: float = 600.0
    max_jobs: int = 2                      # compile jobs at once
    force: bool = False                    # build again from an empty directory, though built before
    confinement: Confinement | None = None  # the build child's sandbox: it may write its build directory alone
    accelerate: bool = True                # off: torch's own build (fastbuild/), nothing made

    def policy(self, directory: Path) -> sandbox.Policy | None:
        return self.confinement.policy(directory) if self.confinement else None


def build(candidate: Candidate, device: DeviceInfo, cache_dir: Path, options: BuildOptions = BuildOptions(),
          yield_cores: bool = True, made_later: MadeLater | None = None) -> BuildResult:
    """Build `candidate` (import it once in a build child; a source with nothing to build, not at all) unless the same
    key was built before, here or elsewhere (BuildOptions says how). The precompiled headers it asks for (pch.py) are
    made after it, before it returns, or by `made_later` (a GPU batch's: beside the evaluations) if given.
    `yield_cores`: as build_env's, the makers too."""
    key = build_sha256(candidate, device, sandboxed=options.confinement is not None, accelerated=options.accelerate)
    directory = (cache_dir / "builds" / key[:32]).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    with _exclusive(directory / LOCK):
        if not options.force and (cached := _cached(directory)) is not None:
            return cached
        _clear(directory, cache_dir, key)
        (directory / CANDIDATE_FILE).write_text(candidate.source)
        cost = expected_build_cost(candidate.source)
        if cost == NOTHING:
            return _kept(directory, _unimported(directory, key))
        log_path = directory / LOG_FILE
        gains = options.accelerate and cost >= TORCH_HEADERS
        with front_ends.FRONT_ENDS.build(gains) as split_nvcc:
            env = build_env(device, directory, options.max_jobs, split_nvcc, yield_cores, options.accelerate)
            outcome = run_child(["build", str(directory)], env=env, timeout_s=options.timeout_s, log_path=log_path,
                                cwd=directory, policy=options.policy(directory))
        log = _in_answer_lines(read_log(log_path), directory, candidate.source, failed=outcome.returncode == 1)
        log_path.write_text(log)  # the build directory keeps what is kept of it (a candidate may print gigabytes)
        if options.accelerate and outcome.returncode in (0, 1):  # not after a build killed (Ctrl-C, a timeout)
            if made_later is not None:
                made_later.add(directory / PCH_REQUESTS, options.confinement)
            else:
                # the makers yield the cores as the build did
                make_requested_pchs(directory / PCH_REQUESTS, options.confinement, yield_cores=YIELD_ENV in env)
        started = CANDIDATE_STARTS in log
        if outcome.timed_out:  # what it left (torch's `lock` files among it) is cleared by the next build
            return BuildResult(status="timeout" if started else "harness_error", build_sha256=key,
                               directory=str(directory), duration_s=outcome.duration_s, log=log,
                               error=f"build {outcome.describe()} (--build-timeout)")
        if not started or outcome.returncode == HARNESS_FAILED:
            # The child failed before the candidate's code ran (or after, in the harness's own steps).
            return BuildResult(status="harness_error", build_sha256=key, directory=str(directory),
                               duration_s=outcome.duration_s, log=log,
                               error=f"harness error: the build child {outcome.describe()}\n{tail(log, 8)}")
        ok = outcome.returncode == 0 and (directory / MANIFEST_FILE).is_file()
        result = BuildResult(
            status="ok" if ok else "compile_error", build_sha256=key, directory=str(directory),
            duration_s=outcome.duration_s, log=log,
            error=None if ok else summarize_failure(log) or outcome.describe(),
        )
        # Only the builder's own verdicts (exit 0 or 1) are kept. A build killed by a signal (Ctrl-C,
        # the OOM killer) or by its timeout is retried next time, perhaps on a quieter machine.
        return _kept(directory, result) if outcome.returncode in (0, 1) else result


def _unimported(directory: Path, key: str) -> BuildResult:
    """A source with nothing to build (no load_inline or load: Triton's kernels compile at their first launch, in
    the evaluation) goes to its evaluation without a build child: that child's import of torch and the candidate
    cost as much as the evaluation's own set-up. Its runner imports it first (UNIMPORTED_FILE) and makes an import
    failure the compile_error a build child would have made; an extension it builds after all (through a name the
    source does not spell) builds in the evaluation's scratch, as one built in forward does."""
    started = time.monotonic()
    (directory / MANIFEST_FILE).write_text("[]")
    (directory / UNIMPORTED_FILE).write_text("")
    (directory / LOG_FILE).write_text("")
    return BuildResult(status="ok", build_sha256=key, directory=str(directory),
                       duration_s=round(time.monotonic() - started, 6), log="")


def _kept(directory: Path, result: BuildResult) -> BuildResult:
    """The verdict written and the directory sealed: later runs reuse it (_cached)."""
    write_atomic(directory / RESULT_FILE, result.model_dump_json())
    seal.seal_directory(directory, SEAL_FILE, skip=frozenset({LOCK}))
    return result
