"""A precompiled head for nvcc's host compile of a `.cu` that starts with torch's headers.

nvcc's last step compiles cudafe++'s output (the `.cudafe1.cpp`: the whole translation unit as host code) with the
host compiler; with torch's headers in it, 16-20 s, most of them parsing those headers again. A load_inline `.cu`
that includes `torch/extension.h` after the implicit `torch/types.h`, as most answers' do, gives cudafe++ output
that starts with the same text in every build of one flag set and one module id (the anonymous namespaces are named
after it): seen for the bench's torch shape, `cuda_runtime.h` before it, and `cuda.h`, `ATen/cuda/CUDAContext.h`,
`c10/cuda/CUDAStream.h` or `c10/cuda/CUDAGuard.h` after it. Not for every source: cudafe++ writes a declaration as
the whole translation unit leaves it (a `.cu` of `torch/types.h` alone declares valarray's `begin` without the
`inline` that torch/extension.h's headers add later), so a build takes the text only where its own is the same,
byte for byte.

A trusted child (`python -m harness.child pch DIR`, `make_main`) writes that text once per flag set and toolchain
(`key`), from a canonical `.cu`, with a GCC precompiled header of it. A build whose cudafe++ output starts with
exactly that text, followed by a line marker, has the text replaced by an `#include` of it: GCC reads the precompiled
header in its place, or the text itself where the header does not fit the command.

What the build means is unchanged: the same text, compiler and flags. The module id is the flag set's: it names
anonymous namespaces, whose names stay hidden inside the extension, and load_inline compiles one `.cu` per
extension, so no two translation units of one link share it (the loader asks for this only in load_inline). Before
a header is trusted its maker proves the mechanism on the canonical `.cu` itself: the object compiled with it is the
object compiled without it, byte for byte. A compile with it that fails or prints anything is done again without
it, and that answer is the one given.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.fastbuild import nvcc_plan
from harness.fastbuild.names import HOST_PCH_FILE, HOST_PCH_PREFIX, PCH_FAILED, PCH_TRUSTED_ENV, pch_root, request_pch
from harness.process import write_atomic

PREFIX, PCH = HOST_PCH_PREFIX, HOST_PCH_FILE  # the shared text, and its precompiled header beside it
RECIPE = 1
JOB = "nvcc-host"  # the first word of a request's command: `pch DIR` makes this kind
CANONICAL = "#include <torch/types.h>\n#include <torch/extension.h>\n"  # load_inline's implicit header, then the usual
END = "int harness_host_pch_end;\n"  # the canonical's own code: where the shared text ends
NAMED_MARKER = re.compile(rb'# [0-9]+ "')
# Where a build looks for its header: a `.cu` that starts with load_inline's implicit header and includes
# torch/extension.h (headers before it that add nothing new, such as cuda_runtime.h, still give the same text)
IMPLICIT = re.compile(r"\s*#\s*include\s*<torch/types\.h>")
EXTENSION_H = re.compile(r"^\s*#\s*include\s*<torch/extension\.h>", re.MULTILINE)


@dataclass
class Header:
    key: str
    directory: Path


def normalized(args: list[str]) -> list[str] | None:
    """nvcc's arguments less what names this build's files (-MD -MF FILE, -c SOURCE, -o OUT) and the extension's
    name (torch's headers never read it; where one did, the shared text would differ): the flag set."""
    rest, sources, i = [], 0, 0
    while i < len(args):
        arg = args[i]
        if arg in ("-MF", "-o", "--output-file"):
            i += 2
            continue
        if arg.endswith(".cu"):
            sources += 1
        elif arg not in ("-MD", "-c", "--compile") and not arg.startswith("-DTORCH_EXTENSION_NAME="):
            rest.append(arg)
        i += 1
    return rest if sources == 1 else None


def key(nvcc: str, flags: list[str]) -> str:
    """The recipe, nvcc and its flags, and the toolchain's files as they are now: after an upgrade of nvcc, of its
    host compiler or of torch, whose text no build would match any more, a new header is made."""
    parts = [f"recipe={RECIPE}", nvcc, *flags, *map(_identity, toolchain(nvcc, flags))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def toolchain(nvcc: str, flags: list[str]) -> list[str]:
    """nvcc, the host compiler it runs (-ccbin, else NVCC_CCBIN, else gcc on PATH) and the torch/extension.h its
    include directories find first."""
    host, includes = os.environ.get("NVCC_CCBIN"), []
    for i, arg in enumerate(flags):
        value = flags[i + 1] if i + 1 < len(flags) else ""
        if arg in ("-ccbin", "--compiler-bindir"):
            host = value
        elif arg.startswith(("-ccbin=", "--compiler-bindir=")):
            host = arg.split("=", 1)[1]
        elif arg in ("-I", "-isystem", "--include-path"):
            includes.append(value)
        elif arg.startswith(("-isystem", "-I")):
            includes.append(arg.removeprefix("-isystem").removeprefix("-I"))
    if host and os.path.isdir(host):  # a directory names where nvcc's gcc is (not the cwd's, for gcc on PATH)
        host = os.path.join(host, "gcc")
    host = host or "gcc"
    torch_header = next((path for path in (os.path.join(d, "torch", "extension.h") for d in includes)
                         if os.path.isfile(path)), "torch/extension.h")
    return [shutil.which(nvcc) or nvcc, shutil.which(host) or host, torch_header]


def _identity(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path} missing"
    return f"{os.path.realpath(path)} {info.st_size} {info.st_mtime_ns}"


def module_id(header_key: str) -> str:
    """The flag set's module id, in nvcc's form for torch's `cuda.cu`."""
    digest = hashlib.sha256(header_key.encode()).hexdigest()
    return f"_{digest[:8]}_7_cuda_cu_{digest[8:16]}"


def header_for(nvcc: str, args: list[str], source: str) -> Header | None:
    """The trusted header for this build's flags, or None: the source does not start like the canonical, or its
    header is not made yet (then asked for, for the next build) or failed."""
    flags = normalized(args)
    try:
        text = Path(source).read_text(errors="replace")
    except OSError:
        return None
    if flags is None or not IMPLICIT.match(_without_comments(text)) or not EXTENSION_H.search(text):
        return None
    header_key = key(nvcc, flags)
    directory = pch_root() / header_key
    if (directory / PCH_FAILED).is_file() or '"' in str(directory) or "\\" in str(directory):
        return None
    if header_key in os.environ.get(PCH_TRUSTED_ENV, "").split(",") and (directory / PREFIX).is_file():
        return Header(header_key, directory)
    request_pch({"make": header_key, "command": [JOB, nvcc, *flags]})
    return None


def _without_comments(text: str) -> str:
    """The source less blank lines and whole-line `//` comments before its first code."""
    lines = text.splitlines()
    while lines and (not lines[0].strip() or lines[0].strip().startswith("//")):
        lines.pop(0)
    return "\n".join(lines)


def rewrite(cudafe: Path, directory: Path) -> bytes | None:
    """Put `#include "DIR/prefix.h"` in place of the shared text, where cudafe++'s output starts with it (after its
    first line, the main file's marker) and goes on with a line marker; the original bytes, or None where it does
    not."""
    original = cudafe.read_bytes()
    prefix = (directory / PREFIX).read_bytes()
    start = original.find(b"\n") + 1
    rest = original[start + len(prefix):]
    if (start == 0 or not original.startswith(b'# 1 "') or original[start:start + len(prefix)] != prefix
            or not NAMED_MARKER.match(rest)):
        return None
    partial = cudafe.with_name(cudafe.name + ".partial")
    partial.write_bytes(original[:start] + b'#include "' + os.fsencode(directory / PREFIX) + b'"\n' + rest)
    os.replace(partial, cudafe)  # whole or not at all: the compile without the header reads the original
    return original


def compile_with(header: Header, cudafe: Path, command: str, env: dict[str, str]) -> int | None:
    """nvcc's host compile with the header: 0 where it compiled and printed nothing; None where the header does
    not apply or the compile failed or spoke (the file is put back, for the compile without it)."""
    original = None
    try:
        original = rewrite(cudafe, header.directory)
        if original is None:
            return None
        done = subprocess.run(["/bin/sh", "-c", command], env=env, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode == 0 and not done.stdout and not done.stderr:
            request_pch({"use": header.key})
            return 0
    except OSError:  # a header only saves time: the compile without it answers
        pass
    if original is not None:
        cudafe.write_bytes(original)
    return None


def make_main(directory: Path, command: list[str]) -> int:
    """`pch DIR` for a host header: DIR/command.json is [JOB, NVCC, FLAGS...], and DIR's name their key."""
    nvcc, flags = command[1], command[2:]
    if key(nvcc, flags) != directory.name:
        print(f"harness: {directory} is not the key of its command", file=sys.stderr)
        return 1
    with open(directory / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 1
        if (directory / PCH_FAILED).is_file():
            return 1
        if (directory / PCH).is_file():
            return 0
        why = _make(directory, nvcc, flags)
        if why is None:
            return 0
        for name in (PREFIX, PCH):
            (directory / name).unlink(missing_ok=True)
        write_atomic(directory / PCH_FAILED, why)
        print(f"harness: no precompiled host header for these nvcc flags (see {directory / PCH_FAILED})",
              file=sys.stderr)
        return 1


def _shared_text(cudafe: Path, source: Path) -> bytes | None:
    """What cudafe++ wrote for the canonical `.cu` before the source's own lines come back (the text every `.cu`
    that starts as the canonical shares), or None where its output is not of the form read here."""
    text = cudafe.read_bytes()
    start = text.find(b"\n") + 1
    main = re.escape(os.fsencode(source))
    end = re.search(rb'\n# [0-9]+ "' + main + rb'"', text[start - 1:])
    if not text.startswith(b'# 1 "' + os.fsencode(source) + b'"') or end is None:
        return None
    return text[start:start - 1 + end.start() + 1]


def _make(directory: Path, nvcc: str, flags: list[str]) -> str | None:
    """Compile the canonical `.cu` as nvcc would, keep its shared text and precompile it, and prove that the
    object compiled with it is the object without it; None when made, else why not."""
    work = Path(tempfile.mkdtemp(prefix="host-pch-", dir=directory))
    try:
        source = work / "cuda.cu"
        source.write_text(CANONICAL + END)
        env = {**os.environ, "TMPDIR": str(work)}
        args = [*flags, "-c", str(source), "-o", str(work / "cuda.o")]
        dry = subprocess.run([nvcc, "--dryrun", *args], env=env, capture_output=True, text=True)
        split = nvcc_plan.plan([line[3:] for line in dry.stderr.splitlines() if line.startswith("#$ ")], None)
        if dry.returncode or split is None:
            return f"nvcc's plan for these flags is not one this splits:\n{dry.stderr}"
        Path(split.module_id_file).write_text(module_id(directory.name))
        env.update(split.env)
        for step in sorted((step for chain in split.chains for step in chain), key=lambda step: step.index):
            done = _run(step.command, env)
            if done.returncode:
                return f"$ {step.command}\n{done.stdout}{done.stderr}"
        cudafe = Path(split.host_source)
        prefix = _shared_text(cudafe, source)
        if prefix is None:
            return "the canonical's cudafe++ output is not of the form this reads"
        if not prefix.strip():
            return "the canonical's cudafe++ output has no shared text"
        why = carried_state(prefix)
        if why is not None:
            return why
        (directory / PREFIX).write_bytes(prefix)
        host = shlex.split(split.finish[-1].command)
        if host.count(str(cudafe)) != 1 or "-o" not in host or host.count("-c") != 1 or "c++" not in host:
            return f"nvcc's host compile is not of the form this reads: {split.finish[-1].command}"
        precompile = [arg for arg in host if arg != "-c"]
        precompile[precompile.index("c++")] = "c++-header"
        precompile[precompile.index(str(cudafe))] = str(directory / PREFIX)
        precompile[precompile.index("-o") + 1] = str(directory / PCH)
        plain, with_header = _outputs(host, work, "plain.o"), _outputs(host, work, "with_header.o")
        why = _quietly(precompile, env) or _quietly(plain, env)
        if why is not None:
            return why
        if rewrite(cudafe, directory) is None:
            return "the canonical's own cudafe++ output does not take its header"
        why = _quietly(with_header, env)
        if why is not None:
            return why
        if (work / "plain.o").read_bytes() != (work / "with_header.o").read_bytes():
            return "the object compiled with the header differs from the one without it"
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def carried_state(prefix: bytes) -> str | None:
    """Why the code after the shared text might not compile as it would after the text itself, or None: a pragma
    whose state outlives the text (GCC's precompiled header may not carry it), other than diagnostics that only
    silence and a visibility pushed and popped within it."""
    visibility = 0
    for pragma in re.findall(rb"^[ \t]*#[ \t]*pragma[ \t]+([^\n]*)", prefix, re.MULTILINE):
        words = pragma.replace(b"(", b" ").split()[:3]
        if words[:2] == [b"GCC", b"diagnostic"] and words[2:] in ([b"push"], [b"pop"], [b"ignored"]):
            continue
        if words[:2] == [b"GCC", b"visibility"] and words[2:] in ([b"push"], [b"pop"]):
            visibility += 1 if words[2] == b"push" else -1
            continue
        return f"the shared text has `#pragma {pragma.decode(errors='replace')}`, whose state may outlive it"
    return None if visibility == 0 else "the shared text leaves a visibility pushed"


def _quietly(command: list[str], env: dict[str, str]) -> str | None:
    """Run a compile that must succeed and print nothing: None if it did, else the command and what it said."""
    done = _run(shlex.join(command), env)
    if done.returncode or done.stdout or done.stderr:
        return f"$ {shlex.join(command)}\n{done.stdout}{done.stderr}"
    return None


def _outputs(command: list[str], work: Path, name: str) -> list[str]:
    command = list(command)
    command[command.index("-o") + 1] = str(work / name)
    return command


def _run(command: str | list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else command
    return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
