"""A precompiled torch/extension.h for the build child (which imports torch); parsing that header is most
of a C++ extension's build time.

torch's own `use_pch=True` keeps one PCH inside the torch install and `use_pch=False` deletes it, so
builds with different flags race. Ours are keyed by the exact command torch compiles `main.cpp` with,
read back from the ninja file torch itself writes for the call (so the flags are those of the torch
version installed: 2.11 compiles with -std=c++17, 2.13 with -std=c++20), one directory per key holding

  torch/extension.h.gch   the PCH, where GCC looks for it before the header in each include directory
  torch/extension.h       a link to the real header: GCC takes a PCH only for the first include, and a
                          second `#include <torch/extension.h>` (a candidate's own, after torch's implicit
                          one) must find the plain header in the same directory, where `#pragma once` skips it

A build child never writes them: a PCH made in a process that runs a candidate's code could carry that code
into every later build with the same flags. It asks (`request`, a line in its build directory's
pch-requests.jsonl), builds without, and after it the parent has the PCH made by `python -m harness.child pch
DIR` (`make_main`), sandboxed to that key's directory, for the next build with those flags.

The PCH only saves time: the build child builds again without it when a build with it fails, unless the
compiler's errors are all at the answer's own lines (blame.py: those the build without it gives too), and a PCH
whose build failed where the build without it worked is retired (`retire`, also on request) for every later
build.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.fastbuild import host_pch
from harness.fastbuild.names import (
    PCH_COMMAND,
    PCH_FAILED,
    PCH_FILE,
    PCH_HEADER,
    PCH_TRUSTED_ENV,
    pch_root,
    request_pch,
)
from harness.process import write_atomic

RECIPE = 2  # in every key: directories of an older recipe (no header link, guessed flags) are never used


def precompiled_header_dir(cpp_ext, arguments: dict) -> Path | None:
    """A directory holding a PCH made with this load_inline call's exact flags, or None where the call's
    main.cpp would not start with torch/extension.h, the header cannot be precompiled for it, or its PCH is not
    made yet (then asked for)."""
    if arguments.get("use_pch") is True:
        return None
    if arguments.get("no_implicit_headers") and not starts_with_extension_h(arguments.get("cpp_sources")):
        return None
    compiler = cpp_ext.get_cxx_compiler()
    if cpp_ext.IS_HIP_EXTENSION or not cpp_ext.check_compiler_is_gcc(compiler):
        return None
    import torch

    header = Path(torch.__file__).parent / "include" / PCH_HEADER
    command = _precompile_command(cpp_ext, arguments, header)
    if command is None:
        return None
    directory = pch_root() / _key(command)
    if (directory / PCH_FAILED).is_file():
        return None
    if directory.name in os.environ.get(PCH_TRUSTED_ENV, "").split(","):
        request_pch({"use": directory.name})  # its last use, for the caches' cap (eval/cache.py)
        return directory
    request_pch({"make": directory.name, "command": command})
    why = "fails its seal check" if (directory / PCH_FILE).is_file() else "is not made yet"
    print(f"harness: the precompiled torch/extension.h for these flags {why}; building without it (it is made "
          "after this build, for the next)", file=sys.stderr)
    return None


def starts_with_extension_h(cpp_sources) -> bool:
    """With no_implicit_headers, main.cpp is the caller's own: the PCH serves it only when
    torch/extension.h is its first include, before any code (as in the lean shape the prompts teach)."""
    first = cpp_sources if isinstance(cpp_sources, str) else (cpp_sources or [""])[0]
    for line in str(first).splitlines():
        line = line.strip()
        if line and not line.startswith("//"):
            return re.fullmatch(r"#\s*include\s*<torch/extension\.h>", line) is not None
    return False


def _precompile_command(cpp_ext, arguments: dict, header: Path) -> list[str] | None:
    """The command that compiles `header` exactly as ninja will compile this call's main.cpp, less
    -DTORCH_EXTENSION_NAME (torch's headers never read it); None for arguments of a shape torch's
    ninja writer is not called with here."""
    extra_cflags = _string_list(arguments.get("extra_cflags"))
    includes = _string_list(arguments.get("extra_include_paths"))
    if extra_cflags is None or includes is None:
        return None
    with_cuda = arguments.get("with_cuda")
    with_cuda = bool(arguments.get("cuda_sources")) if with_cuda is None else with_cuda
    with_sycl = arguments.get("with_sycl")
    with_sycl = bool(arguments.get("sycl_sources")) if with_sycl is None else with_sycl
    variables = _ninja_variables(cpp_ext, extra_cflags, includes, bool(with_cuda), bool(with_sycl))
    if variables is None or "$" in variables.get("cflags", "$") + variables.get("post_cflags", ""):
        return None
    cflags = [flag for flag in shlex.split(variables["cflags"]) if not flag.startswith("-DTORCH_EXTENSION_NAME=")]
    return [*shlex.split(variables["cxx"]), *cflags, *shlex.split(variables.get("post_cflags", "")),
            "-x", "c++-header", str(header)]


def _ninja_variables(cpp_ext, extra_cflags: list[str], includes: list[str], with_cuda: bool,
                     with_sycl: bool) -> dict[str, str] | None:
    """The variables (cxx, cflags, post_cflags, ...) of the ninja file torch writes for such a call."""
    writer = cpp_ext._write_ninja_file_to_build_library
    parameters = inspect.signature(writer).parameters
    with tempfile.TemporaryDirectory(prefix="harness-pch-") as tmp:
        ninja = Path(tmp) / "build.ninja"
        values = {"path": str(ninja), "name": "harness_pch", "sources": [str(Path(tmp) / "main.cpp")],
                  "extra_cflags": extra_cflags, "extra_cuda_cflags": [], "extra_sycl_cflags": [],
                  "extra_ldflags": [], "extra_include_paths": includes, "with_cuda": with_cuda,
                  "with_sycl": with_sycl, "is_standalone": False}
        if {name for name, p in parameters.items() if p.default is p.empty} - set(values):
            return None  # a torch whose writer wants something this does not know
        writer(**{name: value for name, value in values.items() if name in parameters})
        return dict(re.findall(r"^(\w+) = (.*)$", ninja.read_text(), re.MULTILINE))


def _string_list(value) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _key(command: list[str]) -> str:
    """The recipe, the command, the compiler's exact version and torch's, hashed."""
    import torch

    version = subprocess.run([command[0], "--version"], capture_output=True, text=True, check=True).stdout
    parts = [f"recipe={RECIPE}", shlex.join(command), version, f"torch={torch.__version__}"]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def retire(directory: Path, why: str) -> None:
    """Never use this PCH again: a build failed with it and worked without it."""
    request_pch({"retire": directory.name, "why": why})
    print(f"harness: retiring the precompiled header in {directory}: {why}", file=sys.stderr)


def make_main(directory: Path) -> int:
    """`pch DIR`: make the PCH of DIR/command.json in DIR, whose name must be that command's key (a child of
    its own, sandboxed to DIR: the command's flags are a candidate's). 0 made or there already, 1 not."""
    command = json.loads((directory / PCH_COMMAND).read_text())
    if (isinstance(command, list) and len(command) >= 2 and command[0] == host_pch.JOB
            and all(isinstance(a, str) for a in command)):
        return host_pch.make_main(directory, command)
    import torch

    header = Path(torch.__file__).parent / "include" / PCH_HEADER
    if not (isinstance(command, list) and all(isinstance(a, str) for a in command) and command[-1:] == [str(header)]
            and _key(command) == directory.name):
        print(f"harness: {directory / PCH_COMMAND} is not the command of its key", file=sys.stderr)
        return 1
    return 0 if _make_pch(directory, command, header) else 1


def _make_pch(directory: Path, command: list[str], header: Path) -> bool:
    """Build the PCH once per key (another maker holding the lock is left to it)."""
    pch, failed = directory / PCH_FILE, directory / PCH_FAILED
    if failed.is_file() or pch.is_file():
        return not failed.is_file()
    pch.parent.mkdir(parents=True, exist_ok=True)
    with open(directory / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released by the kernel if this process dies
        except BlockingIOError:
            return False
        if failed.is_file() or pch.is_file():
            return not failed.is_file()
        partial = pch.with_name(pch.name + ".tmp")  # not a name GCC looks for; only the lock holder writes it
        start = time.monotonic()
        compiled = subprocess.run([*command, "-o", str(partial)], stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
        if compiled.returncode == 0 and partial.is_file():
            link = directory / PCH_HEADER
            link.unlink(missing_ok=True)
            link.symlink_to(header)
            os.replace(partial, pch)  # last: a PCH is never seen without the header beside it
            print(f"harness: precompiled torch/extension.h in {time.monotonic() - start:.1f} s", file=sys.stderr)
            return True
        partial.unlink(missing_ok=True)
        write_atomic(failed, f"$ {shlex.join(command)}\n{compiled.stdout}{compiled.stderr}")
        print(f"harness: torch/extension.h does not precompile with these flags (see {failed})", file=sys.stderr)
        return False
