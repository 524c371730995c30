"""`harness bench`: the throughput benchmark (harness/eval/bench.py) from the command line."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from harness.cli.config import config_option
from harness.cli.console import UsageError, emit_json, err, fmt, out, positive
from harness.config import load_settings
from harness.device import devices_like, discover
from harness.eval import versus
from harness.eval.bench import CONFIRMING_MEASUREMENTS, STAGES, Bench, Measurement
from harness.eval.bench_candidates import DEFAULT_SHAPES, SHAPES
from harness.types import TARGETS


def cmd_bench(args) -> int:
    kernelbench = checkout(args)
    device = discover(args.target)
    shapes = args.shapes.split(",") if args.shapes else list(DEFAULT_SHAPES[device.target])
    serial = args.serial if args.serial is not None else 0 if kernelbench else 3
    if serial < 0:
        raise UsageError(f"--serial must be 0 or more, got {args.serial}")
    if kernelbench and device.target != "cuda":
        raise UsageError("--versus kernelbench: KernelBench evaluates on a CUDA GPU only (this is --target cpu)")
    unknown = [s for s in shapes if s not in SHAPES[device.target]]
    if unknown:
        raise UsageError(f"--shapes: {', '.join(unknown)} not a shape for target {device.target} "
                         f"(choose from {', '.join(SHAPES[device.target])})")
    results_dir = Path(args.results_dir) if args.results_dir else Path(tempfile.mkdtemp(prefix="harness-bench-"))
    kept = " (removed at the end, also when stopped; --keep keeps it)" if removes_results(args) else ""
    settings = load_settings(config_file=args.config, results_dir=results_dir, db_path=None, force=True, rebuild=False,
                             build_workers=args.build_workers, gpu_slots=args.gpu_slots, sandbox=args.sandbox,
                             timing={"budget_s": args.timing_budget})
    bench = Bench(device, settings, args.problem)
    passes = Passes({"device": device.name, "target": device.target, "problem": bench.problem.id,
                     "build_workers": settings.build_workers} if args.json else None)
    try:
        if kernelbench:
            probe(kernelbench)
        err.print(f"[dim]bench on {escape(device.name)} ({device.target}); problem {bench.problem.id}; "
                  f"{settings.build_workers} build workers; results in {results_dir}{kept}[/]")
        err.print(f"[dim]prepared the clean baseline, the peaks and a warm-up build per shape in "
                  f"{bench.prepare(shapes):.1f} s[/]")
        if not bench.baseline_stands:
            err.print(f"[yellow]the clean baseline did not settle in {CONFIRMING_MEASUREMENTS} measurements (other "
                      "work on this machine?): the first pass measures it again before its first build, which its "
                      "first evaluation time includes[/]")
        for shape in shapes:
            err.print(f"[bold]{shape}[/]: {args.candidates} distinct candidates, pipelined ...")
            jobs = bench.jobs(shape, args.candidates, "pipelined")
            passes.add(bench.pipelined(jobs, args.gpus or 0))
            if kernelbench:
                passes.add(kernelbench_pass(kernelbench, bench, jobs, shape, results_dir / "kernelbench" / shape))
            if serial:
                err.print(f"[bold]{shape}[/]: {serial} other distinct candidates, one at a time ...")
                passes.add(bench.one_at_a_time(bench.jobs(shape, serial, "serial")))
            if args.scaling:
                scaling(bench, jobs, passes)
    finally:
        bench.close()
        if removes_results(args):
            shutil.rmtree(results_dir, ignore_errors=True)
    if not args.json:
        show(passes.done, speedups(passes.done))
    return 0


class Passes:
    """The passes done so far. Each is reported as it ends: a line on stderr and, with --json, its record on stdout
    (the run's facts, the pass, and the ratios it completes), so a run cut short keeps every pass it finished."""

    def __init__(self, facts: dict | None):
        self.facts = facts  # None: no --json
        self.done: list[Measurement | versus.KernelBenchRun] = []

    def add(self, p: Measurement | versus.KernelBenchRun) -> None:
        before = speedups(self.done)
        self.done.append(p)
        report_pass(p)
        if self.facts is not None:
            ratios = {name: ratio for name, ratio in speedups(self.done).items() if name not in before}
            emit_json({**self.facts, **p.summary(), "ratios": ratios})
            sys.stdout.flush()


def removes_results(args) -> bool:
    """The results directory is a temporary one, removed when the bench ends, however it ends."""
    return not (args.results_dir or args.keep)


def checkout(args) -> versus.Checkout | None:
    """--versus and --kernelbench: the KernelBench checkout to compare with, or None (the one-at-a-time pass)."""
    versus_mode = args.versus or ("kernelbench" if args.kernelbench else "serial")
    if versus_mode == "serial":
        if args.kernelbench:
            raise UsageError("--kernelbench DIR is for --versus kernelbench, not --versus serial")
        return None
    if not args.kernelbench:
        raise UsageError("--versus kernelbench needs --kernelbench DIR, a KernelBench checkout")
    try:
        return versus.locate(args.kernelbench)
    except versus.KernelBenchError as exc:
        raise UsageError(f"--kernelbench: {exc}") from None


def probe(kernelbench: versus.Checkout) -> None:
    """Import KernelBench's eval module once, before any pass: a missing dependency is an error at once."""
    try:
        versus.probe(kernelbench)
    except versus.KernelBenchError as exc:
        raise UsageError(f"--kernelbench: {exc}") from None
    known = kernelbench.identity
    err.print(f"[dim]KernelBench: {kernelbench.module} from {kernelbench.root} (commit {known['commit'] or 'unknown'}, "
              f"its package's modules sha256 {known['package_sha256']})[/]")


def kernelbench_pass(kernelbench: versus.Checkout, bench: Bench, jobs, shape: str, scratch) -> versus.KernelBenchRun:
    """The pipelined pass's very candidates through KernelBench's own pipeline (harness/eval/versus.py)."""
    err.print(f"[bold]{shape}[/]: the same {len(jobs)} candidates through KernelBench's pipeline (compile all on "
              f"{bench.settings.build_workers} workers, then evaluate one at a time, each in a fresh process) ...")
    found = versus.run(kernelbench, bench.problem.path, [job.candidate.source for job in jobs],
                       bench.settings.build_workers, bench.settings.eval_timeout_s, scratch, shape=shape,
                       backend="triton" if shape == "triton" else "cuda", arch=bench.device.arch,
                       progress=lambda line: err.print(f"[dim]  KernelBench: {line}[/]"))
    err.print(f"  KernelBench: compile step {found.compile_s:.1f} s, evaluations {found.evaluate_s:.1f} s; it called "
              f"[bold]{found.correct} of {len(found.results)} correct[/] ({found.compiled} compiled)")
    return found


def scaling(bench: Bench, jobs, passes: Passes) -> None:
    """The same (now built) batch evaluated again on one GPU, then on every GPU: evaluation throughput alone."""
    gpus = len(devices_like(bench.device))
    if gpus < 2:
        err.print("[yellow]--scaling needs two GPUs of the same model; one is visible[/]")
        return
    for count in (1, gpus):
        err.print(f"builds cached, evaluating on {count} GPU(s) ...")
        passes.add(bench.pipelined(jobs, count, mode=f"cached-{count}gpu"))


def speedups(passes: list[Measurement | versus.KernelBenchRun]) -> dict[str, float]:
    """pipelined / one-at-a-time and pipelined / kernelbench per shape, and many GPUs / one with builds cached."""
    ratios = {}
    by_mode = {(p.mode, p.shape): p for p in passes}
    for (mode, shape), p in by_mode.items():
        for other in ("one-at-a-time", "kernelbench"):
            slower = by_mode.get((other, shape))
            if mode == "pipelined" and slower and slower.per_min:
                ratios[f"{shape}: pipelined / {other}"] = round(p.per_min / slower.per_min, 2)
    cached = sorted((p for p in passes if p.mode.startswith("cached-")), key=lambda p: p.devices)
    if len(cached) >= 2 and cached[0].per_min:
        ratios[f"{cached[-1].devices} GPUs / 1 GPU (builds cached)"] = round(cached[-1].per_min / cached[0].per_min, 2)
    return ratios


def report_pass(p: Measurement | versus.KernelBenchRun) -> None:
    s = p.summary()
    bad = {k: v for k, v in s["statuses"].items() if k != "correct"}
    err.print(f"  {s['candidates']} in {s['wall_s']:.1f} s = [bold]{s['per_min']:.1f}/min[/]"
              + (f" [red]not correct: {bad}[/]" if bad else "")
              + (f" [yellow]flagged: {s['flags']}[/]" if s.get("flags") else ""))
    for r in p.results:
        if r.status != "correct" and r.error:
            err.print(f"  [red]{r.status}[/]: {escape(r.error.splitlines()[0])}")
            break


def show(passes: list[Measurement | versus.KernelBenchRun], ratios: dict[str, float]) -> None:
    table = Table(title="throughput (stage columns: mean seconds per candidate)")
    summaries = [p.summary() for p in passes]
    stages = [name for name in STAGES
              if any(s["stages_s"].get(name) is not None for s in summaries)]  # Triton's too
    for name in ("pass", "shape", "devices", "candidates", "wall s", "per min", *stages, "busy", "overhead s",
                 "first eval s", "idle s", "cpu s"):
        table.add_column(name, justify="left" if name in ("pass", "shape") else "right")
    for p, s in zip(passes, summaries, strict=True):
        table.add_row(p.mode, p.shape, str(p.devices), str(s["candidates"]), f"{p.wall_s:.1f}", f"{p.per_min:.1f}",
                      *(fmt(s["stages_s"].get(name), ".2f") for name in stages), fmt(p.busy, ".0%"),
                      fmt(p.overhead, ".2f"), fmt(s.get("first_eval_s"), ".1f"), fmt(s.get("device_idle_s"), ".1f"),
                      fmt(s.get("cpu_s_per_candidate"), ".1f"))
    out.print(table)
    for name, ratio in ratios.items():
        out.print(f"{name}: [bold]{ratio:.2f}x[/]")
    out.print("[dim]busy: share of the wall time each device spent checking and timing; overhead: per candidate, "
              "its evaluation beyond checking and timing (child start, imports, model construction); compile, "
              "autotune: Triton's, in the evaluation (build time, in no other column); check_poisoned: the part of "
              "check that trial 0's two runs on poisoned memory took; first eval: when the device got its first "
              "candidate (the first wave of builds); idle: seconds it had none; cpu: CPU seconds of the pass's child "
              "processes (builds, evaluations) per candidate[/]")


def add_parser(sub) -> None:
    bench = sub.add_parser(
        "bench", help="throughput benchmark: distinct candidates per minute, pipelined vs one at a time",
        description="Generate a batch of distinct candidates (relu kernel variants; cuda shapes: lean = no torch "
                    "header in the .cu, torch = torch/extension.h in the .cu, triton = a @triton.jit kernel; "
                    "cpu: C++, or triton in its interpreter), evaluate them end to end through the pipelined "
                    "executor (builds on the CPUs overlapped with the evaluations on each GPU), then "
                    "evaluate --serial other ones one at a time (build, then evaluate in a fresh process), and "
                    "print candidates/min, mean seconds per stage, device busy share, per-candidate overhead and "
                    "the ratio; with --kernelbench DIR, the pipelined pass's very candidates go through KernelBench's "
                    "own pipeline instead (--versus). Uses a fresh results directory (deleted afterwards) so every "
                    "build is cold.")
    bench.add_argument("--target", choices=TARGETS, help="default: cuda if a GPU is visible")
    bench.add_argument("--problem", metavar="ID_OR_PATH",
                       help="a relu problem to evaluate on (default: level1/relu, 16384x49152, on cuda; cpu/relu, "
                            "4096x1024, on cpu); a small one measures the harness rather than the problem's cost")
    bench.add_argument("--candidates", type=positive(int), default=32, metavar="N",
                       help="distinct candidates per shape for the pipelined pass (32)")
    bench.add_argument("--serial", type=int, metavar="M",
                       help="distinct candidates per shape evaluated one at a time, for the ratio (3; 0 skips; with "
                            "--versus kernelbench, 0 unless given)")
    bench.add_argument("--versus", choices=("serial", "kernelbench"),
                       help="what the pipelined pass is compared with: serial (default), --serial other candidates "
                            "one at a time; kernelbench, the same candidates through KernelBench's own evaluation "
                            "pipeline (its build_compile_cache for all on --build-workers processes, then its "
                            "eval_kernel_against_ref one at a time, each in a fresh process, with the trials of its "
                            "eval_from_generations.py: 5 correctness, 100 timed), printing its wall time, "
                            "candidates/min, how many it called correct and the ratio; needs --kernelbench")
    bench.add_argument("--kernelbench", metavar="DIR",
                       help="a KernelBench checkout (its src/kernelbench/eval.py, or src/eval.py in the older layout), "
                            "imported in child processes; implies --versus kernelbench. A package it imports but "
                            "never calls here can be an empty module in DIR/shim/")
    bench.add_argument("--shapes", metavar="LIST", help="comma-separated: lean, torch, triton on cuda (default: "
                       "lean,torch); cpp, triton on cpu (default: cpp)")
    bench.add_argument("--gpus", type=positive(int), metavar="N", help="GPUs for the pipelined pass (default: all)")
    bench.add_argument("--gpu-slots", type=positive(int), metavar="N",
                       help="evaluations one GPU is handed at once in the pipelined pass (default 1)")
    bench.add_argument("--scaling", action="store_true",
                       help="also evaluate the built batch again on 1 GPU and on all: evaluation throughput alone")
    bench.add_argument("--build-workers", type=positive(int), metavar="N", help="parallel builds (default: CPUs)")
    bench.add_argument("--timing-budget", type=positive(float), metavar="S",
                       help="seconds of timing per candidate (default 5, as in evaluations)")
    bench.add_argument("--sandbox", choices=("on", "off"),
                       help="on (default): builds and evaluations in the sandbox, as `harness eval` runs them")
    bench.add_argument("--results-dir", metavar="DIR", help="keep everything here instead of a temporary directory")
    bench.add_argument("--keep", action="store_true", help="keep the temporary results directory")
    config_option(bench)
    bench.add_argument("--json", action="store_true",
                       help="a JSON line per pass on stdout as it ends: the device, target, problem and build "
                            "workers, the pass's figures and candidates' stages, and the ratios it completes")
    bench.set_defaults(func=cmd_bench)
