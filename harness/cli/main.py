"""The `harness` command: the parser, assembled from each command's module; its exit statuses are cli/exits.py's."""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import os
import platform
import signal
import sys
import threading

from harness.cli import audit as cli_audit
from harness.cli import bench as cli_bench
from harness.cli import cache as cli_cache
from harness.cli import config as cli_config
from harness.cli import doctor as cli_doctor
from harness.cli import eval as cli_eval
from harness.cli import exits
from harness.cli import mcp as cli_mcp
from harness.cli import problems as cli_problems
from harness.cli import report as cli_report
from harness.cli import run as cli_run
from harness.cli.console import Parser
from harness.cli.options import eval_options, problems_options, select_options, store_options

# Signals that stop the harness the way Ctrl-C does when sent to it alone (`timeout`, a job scheduler, `kill`, a closed
# terminal): its children run in sessions of their own, which no signal to it reaches, so it must stop them itself.
STOPPING = (signal.SIGTERM, signal.SIGHUP)


def build_parser() -> Parser:
    parser = Parser(
        prog="harness",
        description="Evaluate custom kernels (CUDA or C++ through load_inline) against PyTorch references: "
        "isolated builds, correctness over several seeds, interleaved timing, results in SQLite.",
    )
    parser.add_argument("--version", action=Version, help="the harness's version and protocols, and the versions "
                        "of what it builds and evaluates with (Python, torch and its CUDA, Triton, nvcc), then exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    problems_opts, store_opts, store_only = problems_options(), store_options(), store_options(config=False)
    select_opts = select_options(problems_opts, store_only)
    eval_opts = eval_options(select_opts)
    cli_problems.add_parser(sub, problems_opts)
    cli_eval.add_parser(sub, eval_opts)
    cli_audit.add_parser(sub, eval_opts)
    cli_run.add_parsers(sub, select_opts, eval_opts)
    cli_mcp.add_parser(sub, eval_opts)
    cli_report.add_parsers(sub, problems_opts, store_opts, store_only)
    cli_bench.add_parser(sub)
    cli_cache.add_parser(sub, store_opts)
    cli_config.add_parser(sub)
    cli_doctor.add_parser(sub, store_opts)
    return parser


class Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(versions())
        parser.exit()


def versions() -> str:
    """What a result depends on, read without importing torch or Triton (the parent never does)."""
    from harness.eval.build import BUILD_PROTOCOL, harness_version, torch_version
    from harness.types import PROTOCOL_VERSION

    def installed(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    built_for, nvcc = cli_doctor.torch_cuda(), cli_doctor.nvcc_release()
    torch_build = "not installed" if built_for is None else f"CUDA {built_for}" if built_for else "a CPU build"
    return "\n".join([
        f"kernel-harness {harness_version()} (evaluation protocol {PROTOCOL_VERSION}, build protocol {BUILD_PROTOCOL})",
        f"python {platform.python_version()} ({sys.executable})",
        f"torch {torch_version()} ({torch_build})",
        f"triton {installed('triton')}",
        f"nvcc {nvcc or 'not on PATH'}",
    ])


class Terminated(KeyboardInterrupt):
    """One of STOPPING arrived: handled as Ctrl-C is (every child killed, what was finished kept)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stopped_by_signals():
    """While the command runs, STOPPING raises Terminated in the main thread (once: a repeat during the cleanup is
    ignored); the previous handlers come back after it."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return

    def stop(signum: int, _frame) -> None:
        for sig in STOPPING:
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOPPING}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """The command's exit status. A reader that stops reading (`harness runs --json | head -2`) ends it quietly
    with 0: it has all it asked for, wherever the writing was (a command's output, --version, the flush at exit)."""
    try:
        try:
            return _command(argv)
        finally:
            sys.stdout.flush()  # what is still buffered meets a closed pipe here, not in the interpreter's exit
    except BrokenPipeError:
        # The interpreter flushes stdout again at exit: pointed at devnull, that flush cannot raise a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _command(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    resumable = args.command in ("run", "generate")
    # a bench's temporary results directory goes with it: what it finished is in the lines it printed
    stored = args.command != "bench" or not cli_bench.removes_results(args)
    try:
        with stopped_by_signals():
            return args.func(args)
    except exits.HANDLED + (KeyboardInterrupt,) as exc:  # the exit statuses: cli/exits.py
        return exits.end(exc, resumable=resumable, stored=stored)
