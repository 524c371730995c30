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

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from harness.fastbuild import host_pch
from harness.fastbuild.nvcc_plan import (
    Dependencies,
    Plan,
    Step,
    dependencies,
    derived_dependencies,
    is_plain,
    module_id,
    plan,
    split_command,
)


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
                    self.process = subprocess.Popen(
                        ["/bin/sh", "-c", step.command], env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
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
                if not _dependencies_written(deps, split, env):  # a -M failed where nvcc did not
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
        if filtering is not None and not _dependencies_written(deps, split, env):
            return plain(nvcc, args)
        return _finish(split, header, env)
    finally:
        _stop(chains)
        shutil.rmtree(scratch, ignore_errors=True)


def _dependencies_written(deps: Dependencies | None, split: Plan, env: dict[str, str]) -> bool:
    """At nvcc's filter step: its -MD file written (a plan has that step only where `deps` were read)."""
    assert deps is not None
    return write_dependencies(deps, split.preprocessed, env)


def _finish(split: Plan, header, env: dict[str, str]) -> int:
    """After both chains: nvcc's `rm` of its fatbin (a file already gone is no failure), then the host compile,
    with `header` where one is given."""
    for step in split.finish[:-1]:
        for name in split_command(step.command)[1:]:
            Path(name).unlink(missing_ok=True)
    if header is not None:
        status = host_pch.compile_with(header, Path(split.host_source), split.finish[-1].command, env)
        if status is not None:
            return status
    return subprocess.run(["/bin/sh", "-c", split.finish[-1].command], env=env, stdin=subprocess.DEVNULL).returncode


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


def _same_file(a, b) -> bool:
    try:
        return os.path.samestat(os.fstat(a.fileno()), os.fstat(b.fileno()))
    except (OSError, ValueError):
        return False
