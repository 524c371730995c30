"""The build child's side of build acceleration (child/loader.py calls it, where acceleration is on): torch's nvcc
command made our driver of it, and load_inline's main.cpp compiled with our precompiled torch/extension.h. Both
only save time: what the candidate gets (its module, or the exception) is what torch's own call gives."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from harness.fastbuild.blame import the_answers
from harness.fastbuild.names import PCH_RETRY, SPLIT_NVCC_ENV
from harness.fastbuild.pch import precompiled_header_dir, retire
from harness.fastbuild.teed import teed
from harness.process import CHILD


@contextlib.contextmanager
def nvcc_driver(cpp_ext, building: bool, sole_cu: bool):
    """In a build, torch's nvcc command is our driver of it (nvcc_split.py), through the variable torch reads for
    it, PYTORCH_NVCC: where the parent granted a second core (front_ends.py), nvcc's front ends run side
    by side; in load_inline, whose extension has one `.cu`, the host compile takes a precompiled head where one fits
    (host_pch.py). Not where PYTORCH_NVCC is set already (by the user or the candidate: theirs stands), where torch
    would put ccache or sccache before nvcc, or where torch has no CUDA."""
    command = None
    split = os.environ.get(SPLIT_NVCC_ENV) == "1"
    if building and (split or sole_cu) and "PYTORCH_NVCC" not in os.environ:
        try:
            nvcc = cpp_ext._join_cuda_home("bin", "nvcc")
            wrapped = getattr(cpp_ext, "_wrap_compiler", lambda compiler: [compiler])(nvcc)
            if list(wrapped) == [nvcc] and not cpp_ext.IS_HIP_EXTENSION:
                options = ([] if split else ["--one-chain"]) + (["--host-pch"] if sole_cu else [])
                command = shlex.join([*CHILD, "nvcc", *options, nvcc])
        except Exception:  # noqa: BLE001 - no CUDA here, or a torch without these: plain nvcc
            command = None
    if command is not None and split:
        print("harness: nvcc's host and device front ends run side by side (a core is free for the second)",
              file=sys.stderr)
    if command is not None:
        os.environ["PYTORCH_NVCC"] = command
    try:
        yield
    finally:
        if command is not None and os.environ.get("PYTORCH_NVCC") == command:
            del os.environ["PYTORCH_NVCC"]


def _usable_pch(cpp_ext, bound) -> Path | None:
    """The precompiled header this build may use, or None: none fits, or making one failed (said on stderr)."""
    try:
        pch = precompiled_header_dir(cpp_ext, bound.arguments)
    except Exception as exc:  # noqa: BLE001 - it must never fail a build that works without it
        print(f"harness: building without a precompiled torch/extension.h ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return None
    if pch is None or shlex.quote(str(pch)) != str(pch):  # torch writes extra_cflags into ninja unquoted
        return None
    return pch


def build_extension(cpp_ext, real: Callable, bound, target: Path, with_pch: bool):
    """torch's own call, with our precompiled header when one fits. The PCH only saves time: when the build
    with it fails before main.cpp compiled, and the compiler's errors are not all at the answer's own lines (where
    the build without it fails the same: blame.py), the same call runs again without it, so what the candidate
    sees (the module, or the exception) is what plain torch gives."""

    pch = _usable_pch(cpp_ext, bound) if with_pch else None
    if pch is None:
        return real(*bound.args, **bound.kwargs)
    print(f"harness: using the precompiled torch/extension.h in {pch}", file=sys.stderr)
    # In the C++ flags alone: GCC searches -I before torch's -isystem wherever it stands, and nvcc's command
    # stays torch's own (with it there, the `.cu` read torch/extension.h through our link, and its host header's
    # key changed once this PCH was made)
    cflags = bound.arguments.get("extra_cflags")
    bound.arguments["extra_cflags"] = [*(cflags or []), f"-I{pch}"]
    # torch edits a list of sources in place (its include inserted, the binding appended) and bumps the
    # name's version (name_v1) for a second build in one process: a retry starts from neither.
    sources = {key: value for key, value in bound.arguments.items()
               if key.endswith("_sources") and isinstance(value, list)}
    bound.arguments.update({key: list(value) for key, value in sources.items()})
    versions = getattr(getattr(cpp_ext, "JIT_EXTENSION_VERSIONER", None), "entries", None)
    version = versions.get(bound.arguments["name"]) if isinstance(versions, dict) else None

    def as_torch_left_them() -> None:
        for key, value in sources.items():
            value[:] = bound.arguments[key]

    try:
        with teed() as printed:
            result = real(*bound.args, **bound.kwargs)
    except Exception:
        # main.cpp compiled with the PCH (the failure is elsewhere), or failed at the answer's own lines
        if (target / "main.o").is_file() or the_answers(printed.text, target):
            as_torch_left_them()
            raise
    else:
        as_torch_left_them()
        return result
    print(PCH_RETRY, file=sys.stderr, flush=True)
    bound.arguments["extra_cflags"] = cflags
    bound.arguments.update(sources)
    if isinstance(versions, dict) and version is None:
        versions.pop(bound.arguments["name"], None)
    elif isinstance(versions, dict):
        versions[bound.arguments["name"]] = version
    for leftover in target.iterdir():  # a fresh directory, as the first attempt had
        if leftover.is_file() or leftover.is_symlink():
            leftover.unlink()
    result = real(*bound.args, **bound.kwargs)
    retire(pch, f"a build of {target} failed with it and built without it")
    return result
