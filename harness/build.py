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
import os
import platform
import re
import shlex
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Callable, Literal

from .isolation import child_env, run_child, tail, write_atomic
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

    def wrap(real: Callable, with_pch: bool) -> Callable:
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
            if with_pch:
                use_precompiled_header(cpp_ext, bound.arguments)
            result = real(*bound.args, **bound.kwargs)
            if mode == "build" and not bound.arguments.get("is_standalone", False):
                file = Path(result.__file__ if is_module else result)
                manifest.append({"name": name, "module": file.name.split(".")[0], "dir": str(target),
                                 "file": str(file), "is_python_module": bool(is_module)})
            return result

        loader.__wrapped__ = real
        loader.__signature__ = signature
        return loader

    cpp_ext.load_inline = wrap(cpp_ext.load_inline, with_pch=mode == "build")
    cpp_ext.load = wrap(cpp_ext.load, with_pch=False)  # `load` gets no implicit torch/extension.h
    return manifest


# A precompiled torch/extension.h of our own: parsing that header is most of a C++ build's time.
# torch's `use_pch=True` keeps one PCH inside the torch install and `use_pch=False` deletes it, so
# builds with different flags race; ours are keyed by the exact compile command, one directory each.

PCH_DIR_ENV = "HARNESS_PCH_DIR"
PCH_FILE = Path("torch") / "extension.h.gch"  # where GCC looks, in each include directory, before the header
PCH_FAILED = "failed.log"


def use_precompiled_header(cpp_ext, arguments: dict) -> None:
    """Put a PCH built with this load_inline call's flags first on its include path, when one can be had."""
    if arguments.get("use_pch") is True:
        return
    if arguments.get("no_implicit_headers") and not _starts_with_extension_h(arguments.get("cpp_sources")):
        return
    try:
        directory = _precompiled_header_dir(cpp_ext, arguments)
    except Exception as exc:  # the PCH only saves time: it must never fail a build that works without it
        print(f"harness: building without a precompiled torch/extension.h ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return
    if directory is not None:
        print(f"harness: using the precompiled torch/extension.h in {directory}", file=sys.stderr)
        arguments["extra_include_paths"] = [str(directory), *(arguments.get("extra_include_paths") or [])]


def _starts_with_extension_h(cpp_sources) -> bool:
    """With no_implicit_headers, main.cpp is the caller's own: the PCH serves it only when
    torch/extension.h is its first include, before any code (as in the lean shape the prompts teach)."""
    first = cpp_sources if isinstance(cpp_sources, str) else (cpp_sources or [""])[0]
    for line in str(first).splitlines():
        line = line.strip()
        if line and not line.startswith("//"):
            return re.fullmatch(r"#\s*include\s*<torch/extension\.h>", line) is not None
    return False


def _precompiled_header_dir(cpp_ext, arguments: dict) -> Path | None:
    root = _pch_root()
    compiler = cpp_ext.get_cxx_compiler()
    flags = _main_cpp_flags(cpp_ext, arguments)
    if flags is None or cpp_ext.IS_HIP_EXTENSION or not cpp_ext.check_compiler_is_gcc(compiler):
        return None
    import torch

    header = Path(torch.__file__).parent / "include" / "torch" / "extension.h"
    command = [compiler, "-x", "c++-header", str(header), *flags]
    directory = root / _pch_key(command)
    return directory if _ensure_pch(directory, command) else None


def _pch_root() -> Path:
    """Shared by every results directory: a PCH depends only on its key (~0.8 GB each, one per flag set)."""
    if os.environ.get(PCH_DIR_ENV):
        return Path(os.environ[PCH_DIR_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kernel-harness" / "pch"


def _main_cpp_flags(cpp_ext, arguments: dict) -> list[str] | None:
    """The flags ninja compiles main.cpp with (see torch's _write_ninja_file_to_build_library), less
    -DTORCH_EXTENSION_NAME, which torch's headers never read. GCC accepts a PCH only when the flags
    agree, e.g. -O3 defines __OPTIMIZE__, and a -std in extra_cflags must come after torch's -std=c++20.
    None when the call's arguments have a shape this does not model."""
    extra_cflags = _string_list(arguments.get("extra_cflags"))
    user_includes = _string_list(arguments.get("extra_include_paths"))
    if extra_cflags is None or user_includes is None:
        return None
    with_cuda = arguments.get("with_cuda")
    with_cuda = bool(arguments.get("cuda_sources")) if with_cuda is None else with_cuda
    with_sycl = arguments.get("with_sycl")
    with_sycl = bool(arguments.get("sycl_sources")) if with_sycl is None else with_sycl
    system_includes = cpp_ext.include_paths("cuda" if with_cuda else "xpu" if with_sycl else "cpu")
    system_includes.append(sysconfig.get_path("include", scheme="posix_prefix"))
    # ninja hands the flags to a shell: split them the same way
    cflags = ["-DTORCH_API_INCLUDE_EXTENSION_H",
              *(f"-I{shlex.quote(os.path.abspath(path.strip()))}" for path in user_includes),
              *(f"-isystem {shlex.quote(path)}" for path in system_includes),
              "-fPIC", "-std=c++20", *(flag.strip() for flag in extra_cflags)]
    return shlex.split(" ".join(cflags))


def _string_list(value) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _pch_key(command: list[str]) -> str:
    """The command (without its output), the compiler's exact version and torch's, hashed."""
    version = subprocess.run([command[0], "--version"], capture_output=True, text=True, check=True).stdout
    parts = [shlex.join(command), version, f"torch={torch_version()}"]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _ensure_pch(directory: Path, command: list[str]) -> bool:
    """Build the PCH once per key. A builder that finds another one making it builds without it rather
    than wait (making it takes longer than a build saves)."""
    pch, failed = directory / PCH_FILE, directory / PCH_FAILED
    if pch.is_file() or failed.is_file():
        return pch.is_file()
    pch.parent.mkdir(parents=True, exist_ok=True)
    with open(directory / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released by the kernel if this process dies
        except BlockingIOError:
            return False
        if pch.is_file() or failed.is_file():
            return pch.is_file()
        partial = pch.with_name(pch.name + ".tmp")  # not a name GCC looks for; only the lock holder writes it
        start = time.monotonic()
        compiled = subprocess.run([*command, "-o", str(partial)], stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
        if compiled.returncode == 0 and partial.is_file():
            os.replace(partial, pch)
            print(f"harness: precompiled torch/extension.h in {time.monotonic() - start:.1f} s", file=sys.stderr)
            return True
        partial.unlink(missing_ok=True)
        write_atomic(failed, f"$ {shlex.join(command)}\n{compiled.stdout}{compiled.stderr}")
        print(f"harness: torch/extension.h does not precompile with these flags (see {failed}); "
              "building without it", file=sys.stderr)
        return False


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
