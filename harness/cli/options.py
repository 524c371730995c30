"""The options several commands share (argparse parents), and the Settings they make."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.checks import CHECK_NAMES
from harness.cli.config import config_option
from harness.cli.console import positive, wide_option
from harness.config import DTYPE_CHOICES, Settings, load_settings
from harness.types import TARGETS


def problems_options() -> argparse.ArgumentParser:
    """Where the problems are, and the settings file (which may say so too)."""
    opts = argparse.ArgumentParser(add_help=False)
    config_option(opts)
    opts.add_argument("--problems-dir", metavar="DIR",
                      help="problem root (default: $HARNESS_PROBLEMS_DIR, else the problems/ shipped with the "
                           "harness: this checkout's, or the installed package's)")
    return opts


def store_options(config: bool = True) -> argparse.ArgumentParser:
    """Where results go; with the settings file unless a sibling parent (problems_options) brings it."""
    opts = argparse.ArgumentParser(add_help=False)
    if config:
        config_option(opts)
    opts.add_argument("--results-dir", type=Path, metavar="DIR",
                      help="results directory: harness.db and the build cache (default: ./results, "
                           "or $HARNESS_RESULTS_DIR)")
    opts.add_argument("--db", type=Path, metavar="FILE", help="SQLite file (default: RESULTS_DIR/harness.db)")
    return opts


def select_options(problems: argparse.ArgumentParser, store: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """What every command that asks for or evaluates candidates takes: the target, which problems fit, the run,
    the dtype (the prompt says it) and the output."""
    opts = argparse.ArgumentParser(add_help=False, parents=[problems, store])  # store without --config
    add = opts.add_argument
    add("--target", choices=TARGETS,
        help="cuda (custom CUDA on the GPU) or cpu (C++ on the CPU); default: cuda if a GPU is visible")
    add("--max-memory-gb", type=positive(float), metavar="GB",
        help="skip problems that declare needing more GPU memory than this (MEMORY_GB)")
    add("--run", metavar="NAME", help="run name the results are stored under (default: `eval` for eval, a new "
        "dated name for run and generate)")
    add("--json", action="store_true", help="machine-readable output on stdout: JSON Lines, one object per line")
    wide_option(opts)
    add("--dtype", choices=DTYPE_CHOICES,
        help="precision of floating inputs and parameters (default fp32); tolerances follow it (fp32 1e-4, "
             "fp16/bf16 1e-2, or a problem's own where looser), and baselines are measured and stored per dtype")
    return opts


def eval_options(select: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """What every command that evaluates adds: how to build, check and time, and where."""
    opts = argparse.ArgumentParser(add_help=False, parents=[select])
    add = opts.add_argument
    add("--force", action="store_true", help="build and evaluate again from scratch, even if the "
        "store or the build cache already has the result")
    add("--trials", type=positive(int), metavar="N", help="correctness trials (default 5)")
    add("--build-timeout", type=positive(float), metavar="S", help="seconds per build (default 600)")
    add("--build-acceleration", choices=("on", "off"),
        help="on (default): precompiled headers and nvcc's front ends side by side make builds faster; off: "
             "every build is torch's own load_inline")
    add("--eval-timeout", type=positive(float), metavar="S", help="seconds per evaluation child (default 300)")
    add("--timing-budget", type=positive(float), metavar="S",
        help="seconds of timing per candidate before stopping unconverged (default 5)")
    add("--build-workers", type=positive(int), metavar="N", help="parallel builds (default: number of CPUs)")
    add("--gpus", type=positive(int), metavar="N",
        help="evaluate on at most N GPUs at once (default: every visible "
             "GPU of the same model; CUDA_VISIBLE_DEVICES picks which)")
    add("--gpu-slots", type=positive(int), metavar="N",
        help="evaluations one GPU is handed at once (default 1): their checks share it, each one's timing has it "
             "alone; more than one only where their measured memory fits and other processes' work can be told apart")
    add("--executor", choices=("local", "ray"),
        help="local (default): builds on this machine's CPUs, evaluations on its GPUs; ray: "
             "builds and evaluations as tasks on a Ray cluster (pip install 'kernel-harness[ray]')")
    add("--ray-address", metavar="ADDR",
        help="the Ray cluster to join, e.g. ray://head:10001 or auto (default: $RAY_ADDRESS, else "
             "a local cluster of this machine)")
    add("--compile-baselines", action="store_true",
        help="also measure the problems' torch.compile baselines (cached; `harness baseline` "
             "measures them on their own), so results show their speedup over torch.compile")
    add("--contention-wait", type=float, metavar="S",
        help="before timing on a GPU, wait at most S seconds for other processes computing on it "
             "to stop (default 30; 0: never wait); work of other processes before (after the "
             "wait) or during an evaluation flags its result contended, and it is not counted")
    add("--sandbox", choices=("on", "off"),
        help="on (default): every build and evaluation child runs in a sandbox (read-only files but "
             "its own scratch directory, no network, no way out of its process tree); off: without "
             "one, where the kernel refuses it; such results are flagged unsandboxed")
    add("--max-speedup", type=positive(float), metavar="X",
        help="flag speedups over eager above this as implausible_speedup; flagged results are not counted (default 10)")
    add("--check", choices=CHECK_NAMES,
        help="what decides correctness: truth (default: against the reference computed in float64, within the "
             "dtype's tolerance plus a multiple of the reference's own error, elementwise and normwise), allclose "
             "(|out - ref| <= atol + rtol |ref| against the reference), or another harness's allclose: kernelbench "
             "(fp32 1e-4, fp16/bf16 1e-2) or kernelbench-v0 (1e-2)")
    add("--atol", type=float, metavar="A", help="absolute tolerance of the check (default: the dtype's 1e-4 or "
        "1e-2, a problem's own, or the preset's)")
    add("--rtol", type=float, metavar="R", help="relative tolerance of the check (default as --atol)")
    add("--sanitize", action="store_const", const="memcheck",
        help="also run NVIDIA's compute-sanitizer memcheck over one checked call of each candidate whose outputs were "
             "judged; an access out of bounds or misaligned makes the verdict runtime_error even where the outputs "
             "matched (cuda target; the candidate's set-up and one call run again, under the tool; racecheck: "
             "HARNESS_SANITIZE=racecheck)")
    add("--min-coverage", type=float, metavar="SHARE",
        help="the share of a forward's measured work (0-1) the candidate's own kernels must do; below it a correct "
             "result is flagged low_coverage and not counted (default 0.5; a problem's MIN_COVERAGE replaces it)")
    return opts


def problems_selector(parser: argparse.ArgumentParser, default: str = "") -> None:
    """--problems SELECTOR, and --problem (repeatable), the older spelling, hidden: it adds to the selector."""
    parser.add_argument("--problems", metavar="SELECTOR",
                        help="comma-separated sets (level1, cpu), directories, ids or .py paths" + default)
    parser.add_argument("--problem", action="append", metavar="ID_OR_PATH", help=argparse.SUPPRESS)


def selector(args) -> str | None:
    """What --problems and every --problem name together (None: neither given)."""
    return ",".join([*(args.problem or []), *filter(None, [args.problems])]) or None


SWITCHES = ("force", "compile_baselines")  # store_true flags


def on_off(value: str | None) -> bool | None:
    return None if value is None else value == "on"


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the flags of select_options and eval_options (None: not given, so the environment or
    default applies). `generate` has no evaluation flags: theirs are None."""
    def flag(name: str):
        value = getattr(args, name, None)
        return (value or None) if name in SWITCHES else value  # a switch left off is not given

    return load_settings(config_file=args.config, problems_dir=args.problems_dir,
                         solutions_dir=flag("solutions_dir"),  # run and generate only
                         results_dir=args.results_dir, db_path=args.db, trials=flag("trials"),
                         build_timeout_s=flag("build_timeout"), eval_timeout_s=flag("eval_timeout"),
                         build_acceleration=on_off(flag("build_acceleration")),
                         build_workers=flag("build_workers"), gpus=flag("gpus"), gpu_slots=flag("gpu_slots"),
                         force=flag("force"),
                         executor=flag("executor"), ray_address=flag("ray_address"),
                         max_speedup=flag("max_speedup"), min_coverage=flag("min_coverage"),
                         compile_baselines=flag("compile_baselines"),
                         contention_wait_s=flag("contention_wait"), sandbox=flag("sandbox"), dtype=args.dtype,
                         check=flag("check"), atol=flag("atol"), rtol=flag("rtol"), sanitize=flag("sanitize"),
                         timing={"budget_s": flag("timing_budget")})
