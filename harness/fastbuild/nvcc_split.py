"""nvcc, with its host and device front ends run at the same time: `python -m harness.child nvcc NVCC ARGS...`.

For one `.cu`, nvcc runs cudafe++ (the host front end) and then cicc (the device front end), one after the other,
and both parse the whole translation unit: with torch's headers in it each took 16-49 s. cicc waits only for the
module id cudafe++ writes at its end. This driver asks nvcc for its commands (`--dryrun`), writes a module id of its
own for both to read, runs the host chain (preprocessing, cudafe++) beside the device chain (preprocessing, cicc,
ptxas, fatbinary), then the host compiler, as nvcc would. The build takes the longer chain's time, not the sum. For
`-MD -MF FILE`, nvcc writes FILE itself from its preprocessed files' line markers; so does this driver, the same
way, and where a marker or a name is of a form whose treatment was not compared with nvcc's it asks nvcc's own `-M`
(which preprocesses the whole file again, 3 CPU seconds with torch's headers).

What the build means is unchanged: the same commands with the same flags and inputs. The module id (a name unique
to the translation unit, which also names its anonymous namespaces) is ours instead of the one nvcc derives: the
object differs from plain nvcc's in that name alone. Output and exit status are nvcc's: each command's output is
replayed in nvcc's order, and a failure stops the replay where nvcc's own run would have stopped (what a command
after it printed is dropped, as nvcc never ran it). Anything else (relocatable device code, kept or timed files,
threads, another kind of output, a plan of another shape, a failing dry run) runs plain nvcc. No torch: ninja
starts it for every `.cu`, inside the build's sandbox.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from harness.fastbuild import host_pch

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
    command: str | list[str]   # a line for the shell, as nvcc runs it, or an argument list
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
    tokens = _split(commands[front])
    if module_id is None or host_source is None or "--gen_module_id_file" not in tokens:
        return None
    host_input = tokens[-1]
    last = tools.index("fatbinary")
    host: list[Step] = []
    device: list[Step] = []
    filter_index: int | None = None
    preprocessed: list[str] = []
    for index, (command, tool) in enumerate(zip(commands[:last + 1], tools)):
        filtered = FILTER.fullmatch(command)
        if filtered:
            if deps is None or filtered.group(1).strip() != deps.file or filter_index is not None:
                return None
            filter_index = index
        elif tool == "cudafe++":
            host.append(Step(index, re.sub(r"(?<=\s)--gen_module_id_file(?=\s)", "", command, count=1)))
        elif _is_preprocessing(command):
            if filter_index is not None:  # nvcc's filter reads every preprocessed file: not one made after it
                return None
            preprocessed.append(_output(command))
            (host if _output(command) == host_input else device).append(Step(index, command))
        elif tool in ("cicc", "ptxas", "fatbinary"):
            if tool == "cicc" and ("--device-c" in _split(command) or module_id not in command):
                return None
            device.append(Step(index, command))
        else:
            return None
    if len(host) != 2 or host[0].index > host[1].index or not device or (deps is None) != (filter_index is None):
        return None
    if any(host_source in step.command or host_input in step.command for step in device):
        return None
    produced = {_output(step.command) for step in device} - {None}
    if any(name in host[1].command for name in produced):
        return None
    finish = [Step(last + 1 + i, command) for i, command in enumerate(commands[last + 1:])]
    if (not finish or any(_tool(step.command) != "rm" for step in finish[:-1])
            or not _is_compile(finish[-1].command) or host_source not in finish[-1].command):
        return None
    env = {name: value for name, value in assignments.items()
           if name in PATH_VARIABLES or any(f"${name}" in command for command in commands)}
    return Plan(chains=[host, device], finish=finish, module_id_file=module_id, env=env, host_source=host_source,
                filter_index=filter_index, preprocessed=preprocessed)


def module_id(source: str, args: list[str]) -> str:
    """A name for this translation unit, in nvcc's form (`_HASH_LENGTH_NAME_HASH`), unique to the source's path,
    text and flags."""
    path = Path(source)
    digest = hashlib.sha256(path.read_bytes() if path.is_file() else b"")
    digest.update("\0".join([str(path.resolve()), *args]).encode())
    name = re.sub(r"[^A-Za-z0-9_]", "_", path.name)
    return f"_{digest.hexdigest()[:8]}_{len(path.name)}_{name}_{digest.hexdigest()[8:16]}"


class Chain(threading.Thread):
    """Steps run one after another until one fails, each one's output kept for replaying in nvcc's order."""

    def __init__(self, steps: list[Step], env: dict[str, str], merged: bool):
        super().__init__(daemon=True)
        self.steps, self.env, self.merged = steps, env, merged
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None

    def run(self) -> None:
        try:
            for step in self.steps:
                with self.lock:
                    if self.stopped.is_set():
                        return
                    argv = ["/bin/sh", "-c", step.command] if isinstance(step.command, str) else step.command
                    self.process = subprocess.Popen(
                        argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT if self.merged else subprocess.PIPE)
                out, err = self.process.communicate()
                step.status, step.out, step.err = self.process.returncode, out, err or b""
                step.done.set()
                if step.status:
                    return
        finally:
            for step in self.steps:
                step.done.set()

    def stop(self) -> None:
        with self.lock:
            self.stopped.set()
            if self.process is not None and self.process.poll() is None:
                self.process.kill()


def run_split(nvcc: str, args: list[str], source: str, parallel: bool = True, header=None) -> int:
    """nvcc's plan for its one `.cu`, `source`, its front ends side by side where `parallel`, its host compile with
    `header` (host_pch.Header, and the module id its shared text was made with) where one is given."""
    scratch = tempfile.mkdtemp(prefix="harness-nvcc-")
    chains: list[Chain] = []
    try:
        environ = {**os.environ, "TMPDIR": scratch}  # nvcc names its intermediate files in TMPDIR: ours alone
        dry = subprocess.run([nvcc, "--dryrun", *args], env=environ, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True)
        lines = [line[3:] for line in dry.stderr.splitlines() if line.startswith("#$ ")]
        # -MD in a form dependencies() does not read: its filter step has no stand-in, so plan() says None
        deps = dependencies(nvcc, args)
        split = plan(lines, deps) if dry.returncode == 0 else None
        if split is None:
            return plain(nvcc, args)
        Path(split.module_id_file).write_text(module_id(source, args) if header is None
                                              else host_pch.module_id(header.key))
        env = {**environ, **split.env}
        merged = _same_file(sys.stdout, sys.stderr)
        in_order = sorted((step for chain in split.chains for step in chain), key=lambda step: step.index)
        chains = [Chain(steps, env, merged) for steps in (split.chains if parallel else [in_order])]
        for chain in chains:
            chain.start()
        filtering = split.filter_index
        for step in in_order:
            if filtering is not None and step.index > filtering:  # every step before nvcc's filter succeeded
                filtering = None
                if not write_dependencies(deps, split.preprocessed, env):  # a -M failed where nvcc did not
                    _stop(chains)
                    return plain(nvcc, args)
            step.done.wait()
            if step.status is None or _killed(step.status):
                # A command that could not start or died of a signal (two front ends at once may run out of
                # memory where one would not; nvcc says so its own way): the answer is plain nvcc's.
                _stop(chains)
                return plain(nvcc, args)
            _write(step)
            if step.status:  # the step nvcc would have stopped at
                _stop(chains)
                return step.status
        if filtering is not None and not write_dependencies(deps, split.preprocessed, env):
            return plain(nvcc, args)
        for step in split.finish[:-1]:  # nvcc's `rm` of its fatbin: a file already gone is no failure
            for name in _split(step.command)[1:]:
                Path(name).unlink(missing_ok=True)
        if header is not None:
            status = host_pch.compile_with(header, Path(split.host_source), split.finish[-1].command, env)
            if status is not None:
                return status
        return subprocess.run(["/bin/sh", "-c", split.finish[-1].command], env=env,
                              stdin=subprocess.DEVNULL).returncode
    finally:
        _stop(chains)
        shutil.rmtree(scratch, ignore_errors=True)


def write_dependencies(deps: Dependencies, preprocessed: list[str], env: dict[str, str]) -> bool:
    """nvcc's -MD file, derived where it can be, else from nvcc's own -M (whose output -MD would not print)."""
    text = derived_dependencies(deps, preprocessed)
    if text is not None:
        Path(deps.file).write_text(text)
        return True
    return subprocess.run(deps.command, env=env, stdin=subprocess.DEVNULL, capture_output=True).returncode == 0


def plain(nvcc: str, args: list[str]) -> int:
    return subprocess.run([nvcc, *args]).returncode


def main(argv: list[str]) -> int:
    """`nvcc [--one-chain] [--host-pch] NVCC ARGS...`: --one-chain runs nvcc's commands one after another (no core
    was granted for a second front end), --host-pch compiles the host side with a precompiled head where one fits
    (host_pch.py; the loader asks for it where the `.cu` is its extension's only one)."""
    options = set()
    while argv and argv[0] in ("--one-chain", "--host-pch"):
        options.add(argv.pop(0))
    if not argv:
        print("usage: python -m harness.child nvcc [--one-chain] [--host-pch] NVCC [ARGS...]", file=sys.stderr)
        return 2
    nvcc, args = argv[0], argv[1:]
    if is_plain(args, dict(os.environ)):
        os.execv(nvcc, [nvcc, *args])
    sources = [arg for arg in args if arg.endswith(".cu") and Path(arg).is_file()]
    if len(sources) != 1:  # not one `.cu` to split or to give a header
        os.execv(nvcc, [nvcc, *args])
    header = None
    if "--host-pch" in options:
        try:
            header = host_pch.header_for(nvcc, args, sources[0])
        except Exception as exc:  # noqa: BLE001 - a header only saves time: the build goes on without
            print(f"harness: no precompiled host header ({exc!r})", file=sys.stderr)
    if "--one-chain" in options and header is None:
        os.execv(nvcc, [nvcc, *args])
    return run_split(nvcc, args, sources[0], parallel="--one-chain" not in options, header=header)


def _stop(chains: list[Chain]) -> None:
    for chain in chains:
        chain.stop()
    for chain in chains:
        chain.join()


def _killed(status: int) -> bool:
    """Died of a signal: a negative status, or the shell's 128 + N (ptxas's own errors are 255)."""
    return status < 0 or 128 < status < 160


def _write(step: Step) -> None:
    sys.stdout.buffer.write(step.out)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(step.err)
    sys.stderr.buffer.flush()


def _split(command: str | list[str]) -> list[str]:
    if isinstance(command, list):
        return command
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _tool(command: str) -> str:
    tokens = _split(command)
    return os.path.basename(tokens[0]) if tokens else ""


def _option(command: str | list[str], name: str) -> str | None:
    tokens = _split(command)
    return tokens[tokens.index(name) + 1] if name in tokens[:-1] else None


def _output(command: str | list[str]) -> str | None:
    return _option(command, "-o")


def _is_preprocessing(command: str) -> bool:
    return "-E" in _split(command) and _output(command) is not None


def _is_compile(command: str) -> bool:
    return "-c" in _split(command) and _tool(command) not in ("cicc", "ptxas", "fatbinary", "nvlink", "rm")


def _same_file(a, b) -> bool:
    try:
        return os.path.samestat(os.fstat(a.fileno()), os.fstat(b.fileno()))
    except (OSError, ValueError):
        return False
