"""The `harness` command."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

from . import problems as problem_index
from .config import load_settings
from .device import DeviceError, discover
from .build import log_excerpt
from .problems import ProblemError
from .report import STATUS_STYLE, leaderboard, render
from .runner import Events, candidate_jobs, default_run_name, evaluate, reference_jobs
from .static import CandidateError
from .store import Store, StoreError
from .types import TARGETS, BuildResult, Candidate, EvalResult

DEFAULT_SET = {"cuda": "level1", "cpu": "cpu"}
out = Console()
err = Console(stderr=True)


class UsageError(Exception):
    """Bad input from the user: reported in one message, exit status 2."""


# ---- progress ----

class ConsoleEvents(Events):
    """A progress bar on a terminal; one line per finished evaluation everywhere (on stderr)."""

    def __init__(self) -> None:
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal)
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> ConsoleEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def planned(self, builds: int, evaluations: int) -> None:
        self.tasks["build"] = self.progress.add_task("build", total=builds)
        self.tasks["evaluate"] = self.progress.add_task("evaluate", total=evaluations)

    def built(self, candidate: Candidate, build: BuildResult) -> None:
        self.progress.advance(self.tasks["build"])
        how = "cached" if build.cached else f"{build.duration_s:.1f} s"
        label = candidate.path or candidate.sha256[:12]
        self.progress.console.print(f"[dim]build {build.status:<13} {escape(label)} ({how})[/]")

    def evaluated(self, result: EvalResult) -> None:
        if "evaluate" in self.tasks:  # stored and prechecked results arrive before planned()
            self.progress.advance(self.tasks["evaluate"])
        style = STATUS_STYLE[result.status]
        speed = f" {result.speedup:.2f}x" if result.speedup is not None else ""
        cached = " (stored)" if result.cached else ""
        self.progress.console.print(f"[{style}]{result.status:<13}[/]{speed} {escape(result.problem_id)} "
                                    f"{escape(result.candidate_label)}{cached}")


# ---- output ----

def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_results(results: list[EvalResult]) -> None:
    problems = sorted({r.problem_id for r in results})
    device = results[0].device_name if results else ""
    table = Table(title=escape(f"{', '.join(problems)} on {device}"), title_justify="left")
    for name in ("candidate", "status", "speedup", "ms", "ref ms", "max abs err", "flags"):
        table.add_column(name, justify="right" if name in ("speedup", "ms", "ref ms", "max abs err") else "left",
                         overflow="fold", no_wrap=name not in ("candidate", "flags"))
    for r in results:
        table.add_row(escape(r.candidate_label),
                      f"[{STATUS_STYLE[r.status]}]{r.status}[/]" + (" [dim](stored)[/]" if r.cached else ""),
                      _fmt(r.speedup, ".2f") + ("x" if r.speedup is not None else ""),
                      _fmt(r.runtime_ms, ".3f"), _fmt(r.ref_runtime_ms, ".3f"),
                      _fmt(r.check.max_abs_err if r.check else None, ".2e"), ", ".join(r.flags))
    out.print(table)
    for r in results:
        if r.status == "correct" or not r.error:
            continue
        out.print(f"\n[{STATUS_STYLE[r.status]}]{r.status}[/] {escape(r.candidate_label)}:")
        out.print(escape(r.error), highlight=False)
        if r.status == "compile_error" and r.build and r.build.log:
            out.print(f"[dim]--- end of the compiler output (full log: {escape(r.build.directory)}/build.log)[/]")
            out.print(escape(log_excerpt(r.build.log)), highlight=False)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")


def show_board(board, as_json: bool) -> None:
    if as_json:
        emit_json(board.model_dump())
    else:
        render(board, out)


# ---- commands ----

def _root(args) -> Path:
    return Path(args.problems_dir).resolve() if args.problems_dir else problem_index.default_root()


def cmd_problems_list(args) -> int:
    found, errors = problem_index.index(_root(args))
    if args.level is not None:
        found = [p for p in found if p.level == args.level]
    for message in errors:
        err.print(f"[yellow]warning:[/] {escape(message)}")
    if args.json:
        emit_json([{"id": p.id, "level": p.level, "path": p.path, "description": p.description,
                    "sha256": p.sha256, "tags": list(p.tags)} for p in found])
        return 0
    table = Table()
    for name in ("id", "level", "description"):
        table.add_column(name)
    for p in found:
        table.add_row(escape(p.id), "-" if p.level is None else str(p.level), escape(p.description))
    out.print(table)
    out.print(f"{len(found)} problems in {_root(args)}")
    return 0


def cmd_problems_show(args) -> int:
    problem = problem_index.resolve(args.problem, _root(args))
    source = Path(problem.path).read_text()
    if args.json:
        emit_json({**problem.model_dump(), "source": source})
        return 0
    out.print(f"[bold]{escape(problem.id)}[/]  level {problem.level if problem.level is not None else '-'}  "
              f"{escape(problem.path)}")
    if problem.atol is not None or problem.rtol is not None:
        out.print(f"tolerance: atol={problem.atol} rtol={problem.rtol}")
    out.print(Syntax(source, "python", line_numbers=False))
    return 0


def _settings(args):
    return load_settings(results_dir=args.results_dir, db_path=args.db, trials=args.trials,
                         build_timeout_s=args.build_timeout, eval_timeout_s=args.eval_timeout,
                         build_workers=args.build_workers, force=args.force or None,
                         timing={"budget_s": args.timing_budget})


def _run_jobs(args, jobs, device, kind: str, run_prefix: str):
    settings = _settings(args)
    err.print(f"[dim]target {device.target} on {escape(device.name)}; results in {settings.db}[/]")
    run = args.run or default_run_name(run_prefix)
    with Store(settings.db) as store, ConsoleEvents() as events:
        results = evaluate(jobs, device=device, settings=settings, store=store, run=run, kind=kind, events=events)
    return run, results


def cmd_eval(args) -> int:
    problem = problem_index.resolve(args.problem, _root(args))
    jobs = candidate_jobs(problem, args.candidates)
    _, results = _run_jobs(args, jobs, discover(args.target), "eval", "eval")
    if args.json:
        for r in results:
            emit_json(r.summary())
    else:
        print_results(results)
    return 0


def cmd_run(args) -> int:
    device = discover(args.target)
    selector = args.problems or DEFAULT_SET[device.target]
    chosen = problem_index.select(selector, _root(args))
    jobs, missing = reference_jobs(chosen)
    for problem in missing:
        err.print(f"[yellow]skipped[/] {escape(problem.id)}: no solutions/reference/{escape(problem.id)}.py")
    if not jobs:
        raise UsageError(f"none of the {len(chosen)} problems selected by {selector!r} has a reference solution "
                         "in solutions/reference/")
    run, results = _run_jobs(args, jobs, device, "run", f"reference-{device.target}")
    show_board(leaderboard(run, results), args.json)
    return 0


def _open_store(args) -> Store:
    settings = load_settings(results_dir=args.results_dir, db_path=args.db)
    if not settings.db.is_file():
        raise UsageError(f"no results yet: {settings.db} does not exist (run `harness run` or `harness eval` first)")
    return Store(settings.db)


def cmd_report(args) -> int:
    with _open_store(args) as store:
        runs = store.runs()
        names = [r.name for r in runs]
        if not runs:
            raise UsageError(f"{store.path} holds no runs yet")
        run = args.run or names[-1]
        if run not in names:
            close = difflib.get_close_matches(run, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else "; `harness runs` lists them"
            raise UsageError(f"unknown run {run!r}{hint}")
        board = leaderboard(run, store.results(run))
    show_board(board, args.json)
    return 0


def cmd_runs(args) -> int:
    with _open_store(args) as store:
        runs = store.runs()
    if args.json:
        emit_json([r.__dict__ for r in runs])
        return 0
    table = Table()
    for name in ("run", "created", "kind", "target", "device", "evaluations"):
        table.add_column(name)
    for r in runs:
        table.add_row(escape(r.name), r.created_at, r.kind, r.target, escape(r.device_name), str(r.evaluations))
    out.print(table)
    return 0


# ---- parser ----

def _positive(kind: type):
    """An argparse type: a number of `kind` above zero."""
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            what = "a positive integer" if kind is int else "positive"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in "invalid int value" messages
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Evaluate custom kernels (CUDA or C++ through load_inline) against PyTorch references: "
                    "isolated builds, correctness over several seeds, interleaved timing, results in SQLite.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    problems_opts = argparse.ArgumentParser(add_help=False)
    problems_opts.add_argument("--problems-dir", metavar="DIR",
                               help="problem root (default: problems/ of this checkout, or $HARNESS_PROBLEMS_DIR)")
    store_opts = argparse.ArgumentParser(add_help=False)
    store_opts.add_argument("--results-dir", type=Path, metavar="DIR",
                            help="results directory: harness.db and the build cache (default: ./results, "
                                 "or $HARNESS_RESULTS_DIR)")
    store_opts.add_argument("--db", type=Path, metavar="FILE", help="SQLite file (default: RESULTS_DIR/harness.db)")
    eval_opts = argparse.ArgumentParser(add_help=False, parents=[problems_opts, store_opts])
    eval_opts.add_argument("--target", choices=TARGETS,
                           help="cuda (custom CUDA on the GPU) or cpu (C++ on the CPU); default: cuda if a GPU is visible")
    eval_opts.add_argument("--run", metavar="NAME", help="run name the results are stored under (default: generated)")
    eval_opts.add_argument("--force", action="store_true", help="re-evaluate even if the store already has the result")
    eval_opts.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    eval_opts.add_argument("--trials", type=_positive(int), metavar="N", help="correctness trials (default 5)")
    eval_opts.add_argument("--build-timeout", type=_positive(float), metavar="S", help="seconds per build (default 600)")
    eval_opts.add_argument("--eval-timeout", type=_positive(float), metavar="S",
                           help="seconds per evaluation child (default 300)")
    eval_opts.add_argument("--timing-budget", type=_positive(float), metavar="S",
                           help="seconds of timing per candidate before stopping unconverged (default 5)")
    eval_opts.add_argument("--build-workers", type=_positive(int), metavar="N",
                           help="parallel builds (default: number of CPUs)")

    problems = sub.add_parser("problems", help="list and inspect problems")
    psub = problems.add_subparsers(dest="problems_command", required=True, metavar="SUBCOMMAND")
    plist = psub.add_parser("list", parents=[problems_opts], help="list problems",
                            description="List the problems under the problem root (parsed, not imported).")
    plist.add_argument("--level", type=int, metavar="N", help="only this level")
    plist.add_argument("--json", action="store_true", help="JSON list of {id, level, path, ...}")
    plist.set_defaults(func=cmd_problems_list)
    pshow = psub.add_parser("show", parents=[problems_opts], help="show one problem",
                            description="Show a problem's metadata and source. ID or path to a .py file.")
    pshow.add_argument("problem", metavar="ID_OR_PATH")
    pshow.add_argument("--json", action="store_true", help="metadata and source as JSON")
    pshow.set_defaults(func=cmd_problems_show)

    ev = sub.add_parser("eval", parents=[eval_opts], help="evaluate candidate files on one problem",
                        description="Build, check and time each candidate file (defining ModelNew) against the "
                                    "problem's Model. Exit status 0 whenever the evaluation ran, whatever the verdicts.")
    ev.add_argument("--problem", required=True, metavar="ID_OR_PATH", help="problem id or path to a problem .py file")
    ev.add_argument("candidates", nargs="+", metavar="CANDIDATE.py")
    ev.set_defaults(func=cmd_eval)

    run = sub.add_parser("run", parents=[eval_opts], help="the main job: evaluate solutions over a problem set",
                         description="Evaluate solutions/reference/ over a problem set (default: level1 on cuda, "
                                     "cpu on cpu) and print the leaderboard.")
    run.add_argument("--problems", metavar="SELECTOR",
                     help="comma-separated sets (level1, cpu), directories, ids or .py paths")
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser("report", parents=[store_opts], help="leaderboard of a stored run",
                         description="Per-problem best speedups and the run summary (compile rate, correctness, "
                                     "fast_p, geometric mean speedup).")
    rep.add_argument("--run", metavar="NAME", help="run to report (default: the latest)")
    rep.add_argument("--json", action="store_true", help="machine-readable output")
    rep.set_defaults(func=cmd_report)

    runs = sub.add_parser("runs", parents=[store_opts], help="list stored runs")
    runs.add_argument("--json", action="store_true", help="machine-readable output")
    runs.set_defaults(func=cmd_runs)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ProblemError, CandidateError, DeviceError, StoreError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except ValidationError as exc:
        first = exc.errors()[0]
        err.print(f"[red]error:[/] bad setting {'.'.join(map(str, first['loc']))}: {escape(first['msg'])}")
        return 2
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]: results finished so far are in the store")
        return 130
