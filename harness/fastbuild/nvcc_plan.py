"""nvcc's plan for one `.cu` (the `#$ ` lines of its `--dryrun`), read as two chains that may run at once: the
host chain (preprocessing, cudafe++) and the device chain (preprocessing, cicc, ptxas, fatbinary), then nvcc's `rm` of
its fatbin and the host compiler. Anything of another shape is None: nvcc runs as it is (nvcc_split.py). Also the
`-MD` dependency file nvcc would write, derived from the preprocessed files' line markers. No torch."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path

# nvcc options after which its plan is not the one split here, or whose effect is nvcc's own (not a command).
PLAIN_OPTIONS = {
    "--dryrun", "-dryrun", "--verbose", "-v", "--keep", "-keep", "--keep-dir", "-keep-dir", "--save-temps",
    "-save-temps", "--time", "-time", "--threads", "-t", "--relocatable-device-code", "-rdc", "--device-c", "-dc",
    "--device-w", "-dw", "--dlink-time-opt", "-dlto", "--lib", "-lib", "--run", "-run", "--preprocess", "-E",
    "--generate-dependencies", "-M", "--generate-nonsystem-dependencies", "-MM", "-MMD", "-MT", "-MP",
    "--generate-nonsystem-dependencies-with-compile", "--generate-dependencies-with-compile",
    "--dependency-output", "--dependency-target-name", "--generate-dependency-targets", "--fatbin", "-fatbin",
    "--cubin", "-cubin", "--ptx", "-ptx", "--optix-ir", "-optix-ir", "--link", "-link", "--list-gpu-code",
    "--list-gpu-arch", "--output-directory", "-odir",
}
PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH")
FILTER = re.compile(r"-- Filter Dependencies -- > (.+)")  # nvcc's own step for -MD: no command to run
MARKER_LIKE = re.compile(rb"\n([ \t]*#[ \t]*[0-9][^\n]*)")  # a line marker, or text that looks like one
MARKER = re.compile(rb'# ([0-9]+) "([^"\\]*)"(?: [1-4])*')  # the form the host compiler writes
PLAIN_NAME = re.compile(r"[A-Za-z0-9_./+,@%=~-]+")  # written as it is (a space is escaped: `\ `)


@dataclass
class Step:
    index: int                 # in nvcc's order
    command: str               # a line for the shell, as nvcc runs it
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None  # None: not run (an earlier step of its chain failed, or the run was stopped)
    out: bytes = b""
    err: bytes = b""


@dataclass
class Dependencies:
    """`-MD -MF FILE ... -c SOURCE -o TARGET`, what torch's ninja file gives nvcc."""
    file: str
    target: str
    source: str
    command: list[str]  # nvcc's own `-M` into FILE, without compiling


@dataclass
class Plan:
    chains: list[list[Step]]  # run beside each other, each in order
    finish: list[Step]        # then: nvcc's `rm` of its fatbin and the host compiler
    module_id_file: str
    env: dict[str, str]
    host_source: str = ""                             # cudafe++'s output, which the host compiler compiles
    filter_index: int | None = None                   # where nvcc writes the dependency file, if it does
    preprocessed: list[str] = field(default_factory=list)  # the files it reads them from, in its order


def is_plain(args: list[str], environ: dict[str, str]) -> bool:
    """Whether nvcc should run unsplit: an option above among the arguments or nvcc's own extra flags."""
    extra = " ".join(environ.get(name, "") for name in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"))
    try:
        extra_args = shlex.split(extra)
    except ValueError:
        return True
    for arg in [*args, *extra_args]:
        if arg.split("=", 1)[0] in PLAIN_OPTIONS or re.fullmatch(r"-t\d+", arg):
            return True
    return False


def dependencies(nvcc: str, args: list[str]) -> Dependencies | None:
    """For `-MD -MF FILE ... -c SOURCE -o OUT`: FILE, OUT, SOURCE and the nvcc command that writes into FILE what
    nvcc's -MD would (`-M -MT OUT -MF FILE`, without compiling); None where the arguments are of another form."""
    rest, depfile, output, i = [], None, None, 0
    while i < len(args):
        arg = args[i]
        if arg in ("-MF", "-o", "--output-file") and i + 1 < len(args):
            if arg == "-MF":
                depfile = args[i + 1]
            else:
                output = args[i + 1]
            i += 2
            continue
        if arg.startswith(("-o=", "--output-file=", "-MF=")):
            return None
        if arg not in ("-MD", "-c", "--compile"):
            rest.append(arg)
        i += 1
    sources = [arg for arg in rest if arg.endswith(".cu")]
    if depfile is None or output is None or "-MD" not in args or len(sources) != 1:
        return None
    return Dependencies(depfile, output, sources[0], [nvcc, "-M", "-MT", output, "-MF", depfile, *rest])


def derived_dependencies(deps: Dependencies, preprocessed: list[str]) -> str | None:
    """The dependency file nvcc 13 writes for -MD, from the same preprocessed files: the source, then every file
    whose line marker enters it at line 1 (`# 1 "NAME"`), in the order first seen, a space in a name escaped, the
    target as it is. None where the file has a marker-like line not of the host compiler's own form (a raw string
    can hold one) or a name of other characters: nvcc's handling of those was not compared, so its -M is asked."""
    names: dict[str, None] = {}
    for path in preprocessed:
        for line in MARKER_LIKE.finditer(b"\n" + Path(path).read_bytes()):
            marker = MARKER.fullmatch(line.group(1))
            if marker is None:
                return None
            if marker.group(1) == b"1":
                names.setdefault(os.fsdecode(marker.group(2)), None)
    names.pop(deps.source, None)
    if not names or not PLAIN_NAME.fullmatch(deps.target) or not all(
            PLAIN_NAME.fullmatch(name.replace(" ", "_")) for name in [deps.source, *names]):
        return None
    return f"{deps.target} : " + " \\\n    ".join(name.replace(" ", "\\ ") for name in [deps.source, *names]) + "\n"


def plan(lines: list[str], deps: Dependencies | None) -> Plan | None:
    """nvcc's plan (the `#$ ` lines of its dry run) as chains that may run at once, or None where it is not the
    whole-program compile of one `.cu` to an object: then nvcc runs as it is."""
    assignments: dict[str, str] = {}
    commands: list[str] = []
    for line in lines:
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match:
            assignments[match.group(1)] = match.group(2)
        else:
            commands.append(line)
    tools = [_tool(command) for command in commands]
    if tools.count("cudafe++") != 1 or tools.count("fatbinary") != 1 or "cicc" not in tools:
        return None
    front = tools.index("cudafe++")
    module_id = _option(commands[front], "--module_id_file_name")
    host_source = _option(commands[front], "--gen_c_file_name")
    tokens = split_command(commands[front])
    if module_id is None or host_source is None or "--gen_module_id_file" not in tokens:
        return None
    last = tools.index("fatbinary")
    chains = _front_ends(commands[:last + 1], tools, deps, host_input=tokens[-1], module_id=module_id)
    finish = [Step(last + 1 + i, command) for i, command in enumerate(commands[last + 1:])]
    if chains is None or not _apart(chains, host_source, tokens[-1]) or not _finishes(finish, host_source):
        return None
    env = {name: value for name, value in assignments.items()
           if name in PATH_VARIABLES or any(f"${name}" in command for command in commands)}
    return Plan(chains=[chains.host, chains.device], finish=finish, module_id_file=module_id, env=env,
                host_source=host_source, filter_index=chains.filter_index, preprocessed=chains.preprocessed)


@dataclass
class _FrontEnds:
    """The plan up to fatbinary, each command in its chain."""
    host: list[Step] = field(default_factory=list)    # preprocessing, cudafe++
    device: list[Step] = field(default_factory=list)  # preprocessing, cicc, ptxas, fatbinary
    filter_index: int | None = None
    preprocessed: list[str] = field(default_factory=list)


def _front_ends(commands: list[str], tools: list[str], deps: Dependencies | None, *, host_input: str,
                module_id: str) -> _FrontEnds | None:
    """Each command up to fatbinary in its chain, or None: a command of another kind, or chains not of the form
    split here (two host steps in order, a device chain, nvcc's filter step exactly where `deps` were read)."""
    found = _FrontEnds()
    for index, (command, tool) in enumerate(zip(commands, tools)):
        filtered = FILTER.fullmatch(command)
        output = _output(command)
        if filtered:
            if deps is None or filtered.group(1).strip() != deps.file or found.filter_index is not None:
                return None
            found.filter_index = index
        elif tool == "cudafe++":
            found.host.append(Step(index, re.sub(r"(?<=\s)--gen_module_id_file(?=\s)", "", command, count=1)))
        elif output is not None and "-E" in split_command(command):  # preprocessing
            if found.filter_index is not None:  # nvcc's filter reads every preprocessed file: not one made after it
                return None
            found.preprocessed.append(output)
            (found.host if output == host_input else found.device).append(Step(index, command))
        elif tool in ("cicc", "ptxas", "fatbinary"):
            if tool == "cicc" and ("--device-c" in split_command(command) or module_id not in command):
                return None
            found.device.append(Step(index, command))
        else:
            return None
    host = found.host
    if len(host) != 2 or host[0].index > host[1].index or not found.device or (
            (deps is None) != (found.filter_index is None)):
        return None
    return found


def _apart(chains: _FrontEnds, host_source: str, host_input: str) -> bool:
    """Whether the chains share no file: the device chain reads none of the host's, the host none it makes."""
    if any(host_source in step.command or host_input in step.command for step in chains.device):
        return False
    produced = {output for step in chains.device if (output := _output(step.command)) is not None}
    return not any(name in chains.host[1].command for name in produced)


def _finishes(finish: list[Step], host_source: str) -> bool:
    """Whether what follows fatbinary is nvcc's `rm`s and then the host compile of cudafe++'s output."""
    return bool(finish) and all(_tool(step.command) == "rm" for step in finish[:-1]) and (
        _is_compile(finish[-1].command) and host_source in finish[-1].command)


def module_id(source: str, args: list[str]) -> str:
    """A name for this translation unit, in nvcc's form (`_HASH_LENGTH_NAME_HASH`), unique to the source's path,
    text and flags."""
    path = Path(source)
    digest = hashlib.sha256(path.read_bytes() if path.is_file() else b"")
    digest.update("\0".join([str(path.resolve()), *args]).encode())
    name = re.sub(r"[^A-Za-z0-9_]", "_", path.name)
    return f"_{digest.hexdigest()[:8]}_{len(path.name)}_{name}_{digest.hexdigest()[8:16]}"


def split_command(command: str | list[str]) -> list[str]:
    if isinstance(command, list):
        return command
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _tool(command: str) -> str:
    tokens = split_command(command)
    return os.path.basename(tokens[0]) if tokens else ""


def _option(command: str | list[str], name: str) -> str | None:
    tokens = split_command(command)
    return tokens[tokens.index(name) + 1] if name in tokens[:-1] else None


def _output(command: str | list[str]) -> str | None:
    return _option(command, "-o")


def _is_compile(command: str) -> bool:
    return "-c" in split_command(command) and _tool(command) not in ("cicc", "ptxas", "fatbinary", "nvlink", "rm")
