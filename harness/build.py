"""Builds: every distinct candidate source is imported once, in a child process, in its own
directory keyed by a hash, with the compiler's full output captured.

The candidate calls `load_inline` (or `load`) at import. In the build child those functions are
wrapped so each call builds under `<build dir>/ext<i>_<name>/` (so two candidates that both name
their extension "reverse_cumsum" never collide) and is recorded in `manifest.json`; in the
evaluation child the same wrapper imports the recorded `.so` directly, without ninja or locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import itertools
import json
import platform
import re
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterable, Literal

from .isolation import child_env, kill_all, run_child, tail, write_atomic
from .types import BuildResult, Candidate, DeviceInfo

BUILD_PROTOCOL = 1
CANDIDATE_FILE = "candidate.py"
MANIFEST_FILE = "manifest.json"
RESULT_FILE = "build.json"
LOG_FILE = "build.log"
NO_GPU_HINT = (
    "note: the build step imports the candidate with no GPU visible; create CUDA tensors in "
    "__init__ or forward, not at module level"
)


def torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def build_sha256(candidate: Candidate, device: DeviceInfo) -> str:
    """What makes a built extension reusable: the source and everything it was compiled against."""
    parts = [f"build-protocol={BUILD_PROTOCOL}", f"target={device.target}", f"arch={device.arch}",
             f"torch={torch_version()}", f"python={sys.version_info[:2]}", f"machine={platform.machine()}",
             candidate.sha256]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def extension_env(device: DeviceInfo, cache_dir: Path) -> dict[str, str]:
    """What every child that may touch load_inline needs: a cache of ours and the pinned CUDA arch."""
    extra = {"TORCH_EXTENSIONS_DIR": str(cache_dir / "torch_extensions")}
    if device.arch:
        extra["TORCH_CUDA_ARCH_LIST"] = device.arch
    return extra


def build_env(device: DeviceInfo, cache_dir: Path, max_jobs: int) -> dict[str, str]:
    extra = {**extension_env(device, cache_dir), "MAX_JOBS": str(max_jobs)}
    if device.target == "cuda":
        extra["CUDA_VISIBLE_DEVICES"] = ""  # no GPU for the builder: builds run beside evaluations
    return child_env(extra)


_COMPILER_ERROR = re.compile(r"\berror\b[:(]|: error ", re.IGNORECASE)
_EXCEPTION = re.compile(r"^[A-Za-z_.]*(Error|Exception)\b")
_EXT_DIR = re.compile(r"\S*/ext\d+_[^/\s]*/")


def _is_compiler_error(line: str) -> bool:
    return bool(_COMPILER_ERROR.search(line)) and not line.lstrip().startswith(("ninja: build stopped", "FAILED:"))


def summarize_failure(log: str) -> str:
    """The lines a user (or a model) needs: compiler errors first, else the final exception."""
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
    lines = [_EXT_DIR.sub("", line.rstrip()) for line in log.splitlines()]
    keep: set[int] = set()
    for i, line in enumerate(lines):
        if _is_compiler_error(line) or _EXCEPTION.match(line.strip()):
            keep.update(range(i, min(i + 3, len(lines))))
    text = "\n".join(list(dict.fromkeys(lines[i] for i in sorted(keep)))[:limit])
    return text or tail(log, 15)


def log_excerpt(log: str, lines: int = 20) -> str:
    """The end of the compiler's output: the log up to the Python traceback that follows it."""
    cut = log.find("Traceback (most recent call last):")
    head = log[:cut] if cut > 0 else log
    return tail(head, lines)


@contextlib.contextmanager
def _exclusive(path: Path):
    """A kernel-held lock: released even if this process dies, unlike torch's `lock` file."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _clear_stale_torch_locks(directory: Path) -> None:
    # A builder killed while holding torch's `lock` file would make every later load wait forever.
    for lock in directory.glob("ext*/lock"):
        lock.unlink(missing_ok=True)


def build(candidate: Candidate, device: DeviceInfo, cache_dir: Path, timeout_s: float = 600.0,
          max_jobs: int = 2) -> BuildResult:
    """Build `candidate` (import it once) unless the same key was built before, here or elsewhere."""
    key = build_sha256(candidate, device)
    directory = (cache_dir / "builds" / key[:32]).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    with _exclusive(directory / ".harness-lock"):
        done = directory / RESULT_FILE
        if done.is_file():
            return BuildResult.model_validate_json(done.read_text()).model_copy(update={"cached": True})
        _clear_stale_torch_locks(directory)
        (directory / MANIFEST_FILE).unlink(missing_ok=True)
        (directory / CANDIDATE_FILE).write_text(candidate.source)
        log_path = directory / LOG_FILE
        outcome = run_child(["build", str(directory)], env=build_env(device, cache_dir, max_jobs),
                            timeout_s=timeout_s, log_path=log_path, cwd=directory)
        log = log_path.read_text(errors="replace")
        if outcome.timed_out:
            _clear_stale_torch_locks(directory)
            return BuildResult(status="timeout", build_sha256=key, directory=str(directory),
                               duration_s=outcome.duration_s, log=log,
                               error=f"build {outcome.describe()} (--build-timeout)")
        ok = outcome.returncode == 0 and (directory / MANIFEST_FILE).is_file()
        result = BuildResult(
            status="ok" if ok else "compile_error", build_sha256=key, directory=str(directory),
            duration_s=outcome.duration_s, log=log,
            error=None if ok else summarize_failure(log) or outcome.describe(),
        )
        # Only the builder's own verdicts (exit 0 or 1) are kept. A build killed by a signal (Ctrl-C,
        # the OOM killer) or by its timeout is retried next time, perhaps on a quieter machine.
        if outcome.returncode in (0, 1):
            write_atomic(done, result.model_dump_json())
        return result


def build_many(candidates: Iterable[Candidate], device: DeviceInfo, cache_dir: Path, *,
               timeout_s: float, workers: int, max_jobs: int = 2,
               on_done: Callable[[Candidate, BuildResult], None] | None = None) -> dict[str, BuildResult]:
    """Build distinct candidates in parallel; returns build results by candidate sha256."""
    unique = list({c.sha256: c for c in candidates}.values())
    results: dict[str, BuildResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(build, c, device, cache_dir, timeout_s, max_jobs): c for c in unique}
        try:
            for future in as_completed(futures):
                candidate = futures[future]
                results[candidate.sha256] = future.result()
                if on_done:
                    on_done(candidate, results[candidate.sha256])
        except BaseException:  # Ctrl-C: stop the builders instead of waiting for them
            pool.shutdown(wait=False, cancel_futures=True)
            kill_all()
            raise
    return results


# ---- used inside child processes only (these import torch) ----

def install_extension_loader(directory: Path, mode: Literal["build", "load"]) -> list[dict]:
    """Wrap torch's load_inline / load for the candidate about to be imported from `directory`.

    Returns the manifest list; in build mode the caller writes it once the import has completed.
    """
    import inspect

    import torch.utils.cpp_extension as cpp_ext

    manifest_path = directory / MANIFEST_FILE
    manifest: list[dict] = json.loads(manifest_path.read_text()) if mode == "load" and manifest_path.is_file() else []
    counter = itertools.count()

    def wrap(real: Callable) -> Callable:
        signature = inspect.signature(real)

        def loader(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)  # a wrong keyword fails here, exactly as in torch
            index, name = next(counter), str(bound.arguments["name"])
            is_module = bound.arguments.get("is_python_module", True)
            if mode == "load" and index < len(manifest) and manifest[index]["name"] == name:
                entry = manifest[index]
                if Path(entry["file"]).is_file():
                    return cpp_ext._import_module_from_library(entry["module"], entry["dir"], entry["is_python_module"])
            target = directory / f"ext{index}_{re.sub(r'[^A-Za-z0-9_]', '_', name)[:64]}"
            target.mkdir(exist_ok=True)
            bound.arguments["build_directory"] = str(target)
            bound.arguments["verbose"] = mode == "build"  # compiler output goes to the build log
            result = real(*bound.args, **bound.kwargs)
            if mode == "build" and not bound.arguments.get("is_standalone", False):
                file = Path(result.__file__ if is_module else result)
                manifest.append({"name": name, "module": file.name.split(".")[0], "dir": str(target),
                                 "file": str(file), "is_python_module": bool(is_module)})
            return result

        loader.__wrapped__ = real
        loader.__signature__ = signature
        return loader

    cpp_ext.load_inline = wrap(cpp_ext.load_inline)
    cpp_ext.load = wrap(cpp_ext.load)
    return manifest


def write_manifest(directory: Path, manifest: list[dict]) -> None:
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))


def import_candidate(directory: Path):
    """Import candidate.py from its build directory as module `candidate`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("candidate", directory / CANDIDATE_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["candidate"] = module
    spec.loader.exec_module(module)
    return module
