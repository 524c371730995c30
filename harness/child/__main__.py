"""The one entry of every child process: `python -m harness.child JOB ARG`.

  build DIR        import DIR/candidate.py once, building its extensions (loader.py)
  serve TARGET FD STOP
                   the judge, started ahead of need: import torch, ready the device, then read one WorkerSpec
                   (a JSON line) from stdin, check what the runner on descriptor FD computes against the
                   reference and time both (evaluate.py), with the runner stopped through descriptor STOP
                   while the reference is timed ("-": none stopped, without a sandbox or on a GPU; freeze.py);
                   no candidate code runs in it
  run TARGET FD    the runner, started beside its judge: import torch, ready the device, then run the built
                   candidate as the judge on descriptor FD asks (runner.py)
  pch DIR          make the precompiled torch/extension.h a build asked for, in DIR (fastbuild/pch.py)
  nvcc NVCC ARGS   nvcc, its host and device front ends run at once: torch's nvcc command in a build granted a
                   second core (fastbuild/nvcc_split.py; no torch)
  gate SPEC        observe problem files for the quality gate (gate.py)
  baseline SPEC    time references in clean processes, and the device's peaks (baseline.py)

Only this package imports torch; the parent starts it and reads what it writes, and it ends, with every process it
started, when the parent does (process.die_with_parent).
"""

import os
import sys

USAGE = __doc__
NUMPY_WARNING = "Failed to initialize NumPy"  # the start of torch's message


def yield_the_cores() -> None:
    """SCHED_IDLE, which the compilers inherit: any other process that wakes preempts this one at once. A process
    may lower its own policy unprivileged; where the kernel still refuses, the lowest niceness."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError:
        os.nice(19)


def quiet_numpy_warning() -> None:
    """torch warns "Failed to initialize NumPy" as it is imported where numpy is missing or built for another ABI
    (a CPU wheel does not bring it): nothing a build uses, and it was the first line of every build log. That
    warning alone is silenced, before torch is imported."""
    import warnings

    warnings.filterwarnings("ignore", message=NUMPY_WARNING, category=UserWarning)


def main(argv: list[str]) -> int:
    job, args = (argv[0], argv[1:]) if argv else ("", [])
    from harness.process import YIELD_ENV, die_with_parent  # every job imports it anyway

    die_with_parent()  # first: a parent killed from here on takes this process and its compilers with it
    if os.environ.get(YIELD_ENV):  # builds beside evaluations on a GPU
        yield_the_cores()
    if job in ("build", "pch"):  # the jobs that import torch to build: their logs are the compilers'
        quiet_numpy_warning()
    if job == "build" and len(args) == 1:
        from harness.child.loader import main as run
        return run(argv)
    if job == "serve" and len(args) == 3:
        from harness.child.evaluate import main as run
        return run(argv)
    if job == "run" and len(args) == 2:
        from harness.child.runner import main as run
        return run(argv)
    if job == "pch" and len(args) == 1:
        from pathlib import Path

        from harness.fastbuild.pch import make_main
        return make_main(Path(args[0]))
    if job == "nvcc" and args:
        from harness.fastbuild.nvcc_split import main as run
        return run(args)
    if job == "gate" and len(args) == 1:
        from harness.child.gate import main as run
        return run(args)
    if job == "baseline" and len(args) == 1:
        from harness.child.baseline import main as run
        return run(args)
    print(USAGE, file=sys.stderr)
    return 2


sys.exit(main(sys.argv[1:]))
