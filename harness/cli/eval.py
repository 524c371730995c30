"""`harness eval`: build, check and time candidate files on one problem."""

from __future__ import annotations

import argparse

from rich.markup import escape

from harness.cli.console import UsageError, emit_json, err, fmt, out, problem_root, table_width
from harness.cli.options import settings_from
from harness.cli.problems import memory_filter
from harness.cli.progress import ConsoleEvents
from harness.device import discover
from harness.errors import HarnessFailed
from harness.eval import sanitize
from harness.eval.build import log_excerpt
from harness.eval.context import ProblemContext, contexts_for
from harness.eval.pipeline import RunLabel, candidate_jobs, evaluate
from harness.problems import index as problem_index
from harness.problems.screen import screen
from harness.report.labels import LEGEND, ms, not_counted, pct, times
from harness.report.leaderboard import STATUS_STYLE
from harness.report.tables import Column, print_table
from harness.store import Store
from harness.types import HARNESS_ERROR, EvalResult

EVAL_RUN = "eval"  # where `harness eval` stores what it is not told to store elsewhere: one run, not one a call


def add_parser(sub, eval_opts: argparse.ArgumentParser) -> None:
    ev = sub.add_parser("eval", parents=[eval_opts], help="evaluate candidate files on one problem",
                        description="Build, check and time each candidate file (defining ModelNew) against the "
                                    "problem's Model. Exit status 0 whenever the evaluation ran, whatever the "
                                    "verdicts; 3 when the harness itself failed on a candidate (harness_error: no "
                                    "verdict, nothing cached; run it again). Results go to the run `eval` unless "
                                    "--run names another.")
    ev.add_argument("--problem", required=True, metavar="ID_OR_PATH", help="problem id or path to a problem .py file")
    ev.add_argument("candidates", nargs="+", metavar="CANDIDATE.py")
    ev.set_defaults(func=cmd_eval)


def cmd_eval(args) -> int:
    problem = problem_index.resolve(args.problem, problem_root(args))
    if not memory_filter([problem], args.max_memory_gb):
        raise UsageError(f"{problem.id} declares MEMORY_GB = {problem.memory_gb:g}, above --max-memory-gb")
    jobs = candidate_jobs(problem, args.candidates)
    device = discover(args.target)
    settings = settings_from(args)
    sanitize.require(settings.sanitize, device.target)  # before anything is stored
    unusable = screen([problem], device.target, settings.results_dir / "gate")  # only if it is not shipped
    if unusable:
        raise UsageError(f"{problem.path}: no answer can be judged against this problem: "
                         f"{' '.join(unusable[problem.id])} (`harness problems validate --static {problem.path}` "
                         "says more)")
    err.print(f"[dim]target {device.target} on {escape(device.name)}; results in {settings.db}[/]")
    with Store(settings.db) as store, ConsoleEvents() as events:
        recorded = evaluate(
            jobs,
            device=device,
            settings=settings,
            store=store,
            run=RunLabel(args.run or EVAL_RUN, "eval"),
            events=events,
        )
        results = [result for _, result in recorded]
        contexts = contexts_for(store, results)
    if args.json:
        for r in results:
            emit_json(contexts.get(r.problem_sha256, ProblemContext()).record(r))
    else:
        print_results(results, contexts, table_width(args))
    faults = sum(r.status == HARNESS_ERROR for r in results)
    if faults:
        raise HarnessFailed(faults, "the harness or the machine failed, not the candidate; nothing was cached, run "
                                    "the same command again")
    return 0


def workloads_cell(r: EvalResult) -> str:
    """Right on how many of the workloads that ran (a skipped one is said)."""
    ran = [w for w in r.workloads if w.status not in ("skipped", "not_run")]
    if not ran:
        return "-"
    skipped = sum(w.status == "skipped" for w in r.workloads)
    right = sum(w.status == "correct" for w in ran)
    return f"{right}/{len(r.workloads)}" + (f" ({skipped} skipped)" if skipped else "")


EVAL_COLUMNS = (
    Column("candidate", "path", gives_way=3), Column("status", "name"), Column("workloads", gives_way=6, short="wl"),
    Column("speedup"), Column("vs compile", gives_way=4, short="vs cmp"), Column("ms", gives_way=2),
    Column("ref ms", gives_way=5), Column("% SOL", gives_way=4, short="SOL"),
    Column("coverage", gives_way=5, short="cov"),
    Column("max abs err", gives_way=7, short="err"), Column("flags", "name", gives_way=1))


def print_results(results: list[EvalResult], contexts: dict[str, ProblemContext], width: int | None = None) -> None:
    problems = sorted({r.problem_id for r in results})
    device = results[0].device_name if results else ""
    dtypes = sorted({r.dtype for r in results if r.dtype != "float32"})  # fp32 is the default, said nowhere
    title = f"{', '.join(problems)} on {device}" + (f" in {', '.join(dtypes)}" if dtypes else "")
    several = any(len(r.workloads) > 1 for r in results)
    rows: list[dict[str, str]] = []
    for r in results:
        ctx = contexts.get(r.problem_sha256, ProblemContext())
        vs_compile, sol = ctx.vs_compile(r.speedup), ctx.sol_fraction(r.runtime_ms)
        measured = r.status == "correct" and not r.counted  # its speed is shown, marked as not counted
        rows.append({
            "candidate": escape(r.candidate_label),
            "status": f"[{STATUS_STYLE[r.status]}]{r.status}[/]" + (" [dim](cached)[/]" if r.cached else ""),
            "workloads": workloads_cell(r),
            "speedup": not_counted(r.speedup) if measured else times(r.speedup),
            "vs compile": not_counted(vs_compile) if measured else times(vs_compile),
            "ms": ms(r.runtime_ms),
            "ref ms": ms(r.ref_runtime_ms),
            "% SOL": pct(sol),
            "coverage": pct(r.coverage.share) if r.coverage else "-",
            "max abs err": fmt(r.check.max_abs_err if r.check else None, ".2e"),
            "flags": ", ".join(r.flags),
        })
    columns = [c for c in EVAL_COLUMNS if several or c.header != "workloads"]  # one workload: nothing to count
    print_table(out, columns, [tuple(row[c.header] for c in columns) for row in rows], width=width,
                title=escape(title))
    if any(r.status == "correct" and not r.counted and r.speedup is not None for r in results):
        out.print(f"[dim]{escape(LEGEND)}[/]", highlight=False)
    for r in results:
        if halves := training_halves(r):
            out.print(f"{escape(r.candidate_label)}: {halves}", highlight=False)
    print_errors(results)


def training_halves(r: EvalResult) -> str | None:
    """A training problem's timed call split into its forward and backward, the candidate's and the reference's."""
    if r.runtime is None or r.runtime.forward_median_ms is None:
        return None
    mine, ref = r.runtime, r.ref_runtime
    text = f"forward {ms(mine.forward_median_ms)} + backward {ms(mine.backward_median_ms)} ms"
    if ref is not None and ref.forward_median_ms is not None:
        text += f" (reference {ms(ref.forward_median_ms)} + {ms(ref.backward_median_ms)} ms)"
    return text


def print_errors(results: list[EvalResult]) -> None:
    """What went wrong with each result that has an error: its message, its workloads, the compiler's or its own
    output."""
    for r in results:
        if not r.error:  # a correct result has one only where its low coverage has a cause to quote
            continue
        why = " (no verdict: the harness or the machine failed)" if r.status == HARNESS_ERROR else ""
        out.print(f"\n[{STATUS_STYLE[r.status]}]{r.status}[/] {escape(r.candidate_label)}{why}:")
        out.print(escape(r.error), highlight=False)
        for w in r.workloads:
            if w.status not in ("correct", "not_run") and w.message or w.note:
                out.print(f"[dim]workload {escape(w.name)} ({w.status}): {escape(w.message or w.note or '')}[/]",
                          highlight=False)
        if r.status == "compile_error" and r.build and r.build.log:
            out.print(f"[dim]--- end of the compiler output (full log: {escape(r.build.directory)}/build.log)[/]")
            out.print(escape(log_excerpt(r.build.log)), highlight=False)
        if r.output and r.status != "correct":
            out.print("[dim]--- what it printed (its build, set-up and first call; the end of it)[/]")
            out.print(escape(r.output), highlight=False)
