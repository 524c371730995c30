"""Leaderboards: per-problem bests of one run, and runs side by side; rich tables, JSON and CSV.

What a result is worth is read against what is stored beside it: the clean eager and torch.compile
baselines of its problem (speedup over compile, measured interleaved with eager in the baseline
child, so vs_compile = speedup x compile_ms / eager_ms) and the device's ceiling (% of the speed of light =
the problem's lower-bound time at the ceiling faster_than_light uses / the result's time, at most 1; eval/roofline.py).
Never imports torch.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from statistics import median

from pydantic import Field
from rich.console import Console
from rich.markup import escape

from harness.eval.context import ProblemContext, contexts_for
from harness.flags import UNINFORMATIVE
from harness.report.labels import LEGEND, flagged_line, ms, not_counted, pct, times
from harness.report.tables import Column, print_table
from harness.store import RunInfo, RunUsage, Store
from harness.types import HARNESS_ERROR, VERDICTS, EvalResult, Frozen

FAST_P = (0.0, 1.0, 1.5, 2.0)


class ProblemRow(Frozen):
    problem: str = Field(description="Problem id")
    candidates: int = Field(description="Candidates evaluated on it")
    statuses: dict[str, int] = Field(description="Candidates per status")
    best_speedup: float | None = Field(description="Best speedup over eager of a counted candidate")
    best_vs_compile: float | None = Field(description="The same candidate's speedup over the best torch.compile mode")
    best_runtime_ms: float | None = Field(description="Median runtime of that candidate")
    ref_runtime_ms: float | None = Field(description="Reference median measured beside it")
    best_candidate: str | None = Field(description="Path (or hash prefix) of that candidate")
    flags: tuple[str, ...] = Field(description="Flags raised on the best candidate")
    best_coverage: float | None = Field(default=None, description="That candidate's share of the work done by its "
                                                                  "own code, 0-1 (child/coverage.py)")
    eager_ms: float | None = Field(description="Clean eager baseline median")
    compile_ms: float | None = Field(description="Best torch.compile baseline median")
    compile_kind: str | None = Field(description="Which torch.compile mode that is")
    sol_ms: float | None = Field(description="Lower-bound time from the problem's bytes and FLOPs at the device's "
                                             "ceiling (the one faster_than_light uses)")
    sol_fraction: float | None = Field(description="sol_ms / best_runtime_ms: share of the speed of light reached, at "
                                                   "most 1; None where the time beats sol_ms (faster than light)")
    eager_sol_fraction: float | None = Field(description="sol_ms / eager_ms, the same way")
    compile_sol_fraction: float | None = Field(description="sol_ms / compile_ms, the same way")


class FlaggedRow(Frozen):
    problem: str = Field(description="Problem id")
    candidate: str = Field(description="Path (or hash prefix) of the candidate")
    speedup: float | None = Field(description="The speedup it claimed")
    runtime_ms: float | None = Field(description="Its median runtime")
    flags: tuple[str, ...] = Field(description="Why its speed is not trusted")


class UninformativeRow(Frozen):
    problem: str = Field(description="Problem id")
    candidate: str = Field(description="Path (or hash prefix) of the candidate")
    status: str = Field(description="Its verdict, which says nothing: the problem cannot tell right from wrong")
    reason: str = Field(description="What is degenerate about the problem's reference output")


class HarnessErrorRow(Frozen):
    problem: str = Field(description="Problem id")
    candidate: str = Field(description="Path (or hash prefix) of the candidate")
    error: str | None = Field(description="What failed in the harness or on the machine")


class Funnel(Frozen):
    """Candidates at each stage: answered -> with code -> compiled -> correct -> counted and faster than eager."""

    generated: int = Field(description="Answers (or files) evaluated")
    with_code: int = Field(description="Of which held a candidate (not no_code)")
    compiled: int = Field(description="Of which built")
    correct: int = Field(description="Of which were correct")
    faster: int = Field(description="Of which were counted and faster than eager")


class Summary(Frozen):
    run: str = Field(description="Run name")
    model: str | None = Field(default=None, description="The model that wrote the candidates, if any")
    device: str | None = Field(default=None, description="Device the run evaluated on")
    dtype: str | None = Field(default=None, description="The evaluation dtype of its results (several, comma-"
                                                        "separated, where they differ)")
    problems: int = Field(description="Distinct problems in the run")
    candidates: int = Field(description="Evaluations in the run")
    compile_rate: float | None = Field(description="Share of candidates with code whose build succeeded")
    correct_rate: float | None = Field(description="Share of candidates that are correct")
    fast_p: dict[str, float] = Field(description="Share of problems with a counted candidate faster than p x eager")
    geomean_speedup: float | None = Field(description="Geometric mean over problems of the best counted speedup "
                                                      "over eager")
    geomean_vs_compile: float | None = Field(default=None, description="The same over the best torch.compile mode "
                                                                       "(problems with a compile baseline)")
    median_sol: float | None = Field(default=None, description="Median over problems of the best counted "
                                                               "candidate's share of the speed of light")
    flagged: int = Field(description="Correct candidates not counted: their speed is flagged as untrustworthy")
    harness_errors: int = Field(default=0, description="Evaluations the harness itself failed (no verdict; counted "
                                                       "in no rate; retried by the next run)")
    uninformative: int = Field(default=0, description="Evaluations on a problem whose reference output cannot tell "
                                                      "right from wrong (flag uninformative_problem): in no rate")
    statuses: dict[str, int] = Field(description="Candidates per status")
    funnel: Funnel | None = Field(default=None, description="Candidates at each stage")
    tokens: int | None = Field(default=None, description="Prompt + completion tokens of the run's answers")
    cost_usd: float | None = Field(default=None, description="What they cost at the given prices")


class Leaderboard(Frozen):
    summary: Summary
    problems: list[ProblemRow]
    flagged: list[FlaggedRow] = Field(description="Correct results left out of every number above")
    uninformative: list[UninformativeRow] = Field(default_factory=list, description="Results on a problem whose "
                                                  "reference output cannot tell right from wrong: in no number above")
    harness_errors: list[HarnessErrorRow] = Field(default_factory=list, description="Evaluations without a verdict: "
                                                  "the harness or the machine failed")
    speedups: list[float] = Field(default_factory=list, description="Every counted candidate's speedup over eager")


def _speed(counted: EvalResult) -> float:
    """A counted result's speedup (counting requires one)."""
    return counted.speedup if counted.speedup is not None else -math.inf


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _set_apart(results: list[EvalResult]) -> tuple[list[HarnessErrorRow], list[UninformativeRow], list[EvalResult]]:
    """What no rate may count: a harness error is no verdict (gone once a later evaluation judged the same
    pair), and a verdict on a problem that cannot tell right from wrong says nothing. The rest is rated."""
    judged = {(r.problem_id, r.candidate_sha256) for r in results if r.status != HARNESS_ERROR}
    faults = [HarnessErrorRow(problem=r.problem_id, candidate=r.candidate_label, error=r.error) for r in results
              if r.status == HARNESS_ERROR and (r.problem_id, r.candidate_sha256) not in judged]
    results = [r for r in results if r.status != HARNESS_ERROR]
    void = [UninformativeRow(problem=r.problem_id, candidate=r.candidate_label, status=r.status,
                             reason=r.uninformative or "-") for r in results if UNINFORMATIVE in r.flags]
    return faults, void, [r for r in results if UNINFORMATIVE not in r.flags]


def leaderboard(run: str, results: list[EvalResult], contexts: dict[str, ProblemContext] | None = None, *,
                model: str | None = None, usage: RunUsage | None = None,
                prices: tuple[float, float] | None = None) -> Leaderboard:
    """`contexts` maps a problem's sha256 to what is known of it on the run's device (may be empty)."""
    contexts = contexts or {}
    faults, void, results = _set_apart(results)
    by_problem: dict[str, list[EvalResult]] = {}
    for r in results:
        by_problem.setdefault(r.problem_id, []).append(r)
    rows = []
    for problem, items in by_problem.items():
        best = max((r for r in items if r.counted), key=_speed, default=None)
        ctx = contexts.get(items[0].problem_sha256, ProblemContext())
        compiled = ctx.best_compile
        compile_ms = compiled.ms if compiled else None
        eager_ms = ctx.eager.timing.median_ms if ctx.eager and ctx.eager.timing else None
        bound = ctx.sol_ms
        rows.append(ProblemRow(
            problem=problem, candidates=len(items), statuses=dict(Counter(r.status for r in items)),
            best_speedup=best.speedup if best else None, best_vs_compile=ctx.vs_compile(best.speedup if best else None),
            best_runtime_ms=best.runtime_ms if best else None, ref_runtime_ms=best.ref_runtime_ms if best else None,
            best_candidate=best.candidate_label if best else None, flags=best.flags if best else (),
            best_coverage=best.coverage.share if best and best.coverage else None,
            eager_ms=eager_ms, compile_ms=compile_ms, compile_kind=compiled.kind if compiled else None, sol_ms=bound,
            sol_fraction=ctx.sol_fraction(best.runtime_ms if best else None),
            eager_sol_fraction=ctx.sol_fraction(eager_ms), compile_sol_fraction=ctx.sol_fraction(compile_ms)))
    counted = [r for r in results if r.counted]
    with_code = [r for r in results if r.status != "no_code"]
    built = [r for r in with_code if r.build is not None and r.build.status == "ok"]
    correct = [r for r in results if r.status == "correct"]
    flagged = [FlaggedRow(problem=r.problem_id, candidate=r.candidate_label, speedup=r.speedup,
                          runtime_ms=r.runtime_ms, flags=r.flags) for r in correct if not r.counted]
    bests = [row for row in rows if row.best_speedup is not None]
    best_speedups = [row.best_speedup for row in rows if row.best_speedup is not None]
    n_problems = len(by_problem)
    tokens = usage.prompt_tokens + usage.completion_tokens if usage and usage.requests else None
    summary = Summary(
        run=run, model=model, device=results[0].device_name if results else None,
        dtype=", ".join(sorted({r.dtype for r in results})) or None,
        problems=n_problems, candidates=len(results),
        compile_rate=len(built) / len(with_code) if with_code else None,
        correct_rate=len(correct) / len(results) if results else None,
        fast_p={f"{p:g}": (sum(s > p for s in best_speedups) / n_problems if n_problems else 0.0) for p in FAST_P},
        geomean_speedup=_geomean(best_speedups),
        geomean_vs_compile=_geomean([row.best_vs_compile for row in bests if row.best_vs_compile is not None]),
        median_sol=median(fs) if (fs := [row.sol_fraction for row in bests if row.sol_fraction is not None]) else None,
        statuses={s: n for s in VERDICTS if (n := sum(r.status == s for r in results))},
        flagged=len(flagged), harness_errors=len(faults), uninformative=len(void),
        funnel=Funnel(generated=len(results), with_code=len(with_code), compiled=len(built), correct=len(correct),
                      faster=sum(_speed(r) > 1 for r in counted)),
        tokens=tokens,
        cost_usd=usage.cost_usd(prices) if usage else None,
    )
    return Leaderboard(summary=summary, problems=rows, flagged=flagged, harness_errors=faults, uninformative=void,
                       speedups=[_speed(r) for r in counted])


# ---- from the store ----

def run_board(store: Store, info: RunInfo, prices: tuple[float, float] | None = None) -> Leaderboard:
    """One stored run's leaderboard; `prices` (USD per million prompt / completion tokens) override the run's."""
    results = store.results(info.name)
    if info.kind != "run":  # eval, audit, api: evaluating a file again replaces its earlier result in the run
        results = list({(r.problem_id, r.candidate_sha256): r for r in results}.values())
    model = info.model
    if info.backend == "triton" and model and not model.endswith("/triton"):  # runs side by side tell backends apart
        model += " (triton)"
    return leaderboard(info.name, results, contexts_for(store, results), model=model,
                       usage=store.usage(info.name), prices=prices or store.run_prices(info.name))


# ---- output ----

def first_line(text: str | None) -> str:
    return (text or "-").splitlines()[0][:200]


STATUS_STYLE = {"correct": "green", "incorrect": "red", "compile_error": "yellow", "runtime_error": "magenta",
                "timeout": "magenta", "rejected": "red", "no_code": "dim", "harness_error": "bold red"}

# Each table's columns, declared once: how they read, and the order they give way in on a narrow terminal
# (report/tables.py; highest first, 0 never).
PROBLEM_COLUMNS = (
    Column("problem", "name"), Column("cands", gives_way=7, short="n"), Column("best speedup", short="best"),
    Column("vs compile", gives_way=3, short="vs cmp"), Column("ref ms", gives_way=4),
    Column("best ms", gives_way=2, short="ms"), Column("% SOL", gives_way=3, short="SOL"),
    Column("coverage", gives_way=5, short="cov"), Column("statuses", "name", gives_way=6),
    Column("flags", "name", gives_way=1))
FLAGGED_COLUMNS = (
    Column("problem", "name"), Column("candidate", "path", gives_way=3), Column("measured speedup", short="speedup"),
    Column("ms", gives_way=2), Column("flags", "name", gives_way=1))
APART_COLUMNS = (Column("problem", "name"), Column("candidate", "path", gives_way=2))
RUN_COLUMNS = (
    Column("run", "name"), Column("model", "name", gives_way=5), Column("device", "name", gives_way=9),
    Column("dtype", "name", gives_way=10), Column("problems", gives_way=6, short="probs"),
    Column("correct", gives_way=3, short="ok"), *(Column(f"fast_{p:g}", gives_way=8 if p != 1 else 2,
                                                        short=f"f{p:g}") for p in FAST_P),
    Column("geomean"), Column("vs compile", gives_way=4, short="vs cmp"), Column("% SOL", gives_way=4, short="SOL"),
    Column("tokens", gives_way=7), Column("cost", gives_way=7))


def _best_cells(row: ProblemRow, flagged: list[FlaggedRow]) -> tuple[str, str, tuple[str, ...]]:
    """A problem's best speedup, time and flags: its counted best, else its fastest flagged result in the
    not-counted notation, so a busy machine's board still shows what was measured and why it is not counted."""
    if row.best_speedup is not None or not flagged:
        return times(row.best_speedup), ms(row.best_runtime_ms), row.flags
    fastest = max(flagged, key=lambda f: f.speedup if f.speedup is not None else -math.inf)
    shown = ms(fastest.runtime_ms)
    return not_counted(fastest.speedup), shown if fastest.runtime_ms is None else f"({shown})", fastest.flags


def render(board: Leaderboard, console: Console, width: int | None = None) -> None:
    """One run: a row per problem, the flagged results, and the summary; fitted to `width` (None: whole)."""
    flagged_by_problem: dict[str, list[FlaggedRow]] = {}
    for f in board.flagged:
        flagged_by_problem.setdefault(f.problem, []).append(f)
    rows = []
    for row in board.problems:
        speedup, best_ms, flags = _best_cells(row, flagged_by_problem.get(row.problem, []))
        statuses = " ".join(f"[{STATUS_STYLE[s]}]{s} {n}[/]" for s, n in row.statuses.items())
        rows.append((escape(row.problem), str(row.candidates), speedup, times(row.best_vs_compile),
                     ms(row.ref_runtime_ms), best_ms, pct(row.sol_fraction), pct(row.best_coverage), statuses,
                     ", ".join(flags)))
    title = f"run {board.summary.run}" + (f" ({board.summary.dtype})" if board.summary.dtype else "")
    print_table(console, PROBLEM_COLUMNS, rows, width=width, title=escape(title))
    if board.flagged:
        print_table(console, FLAGGED_COLUMNS,
                    [(escape(f.problem), escape(f.candidate), not_counted(f.speedup), ms(f.runtime_ms),
                      f"[red]{', '.join(f.flags)}[/]") for f in board.flagged],
                    width=width, title="flagged: correct, but not counted (the speed it measured is not trusted)")
    if board.uninformative:
        _apart(console, width, "uninformative problems: verdicts that say nothing (the reference output cannot tell "
                               "right from wrong at its tolerance), in no number",
               (Column("status", "name", gives_way=1), Column("why", "text")),
               [(escape(row.problem), escape(row.candidate), row.status, f"[yellow]{escape(row.reason)}[/]")
                for row in board.uninformative])
    if board.harness_errors:
        _apart(console, width, "harness errors: no verdict (the harness or the machine failed; the next run "
                               "retries them)", (Column("error", "text"),),
               [(escape(row.problem), escape(row.candidate), f"[bold red]{escape(first_line(row.error))}[/]")
                for row in board.harness_errors])
    _summary(board, console)


def _summary(board: Leaderboard, console: Console) -> None:
    s = board.summary
    fast = "  ".join(f"fast_{p}={pct(v)}" for p, v in s.fast_p.items())
    console.print(f"{s.problems} problems, {s.candidates} candidates | compiled {pct(s.compile_rate)} | "
                  f"correct {pct(s.correct_rate)} | {fast} | geomean speedup {times(s.geomean_speedup)}"
                  + (f" (vs compile {times(s.geomean_vs_compile)})" if s.geomean_vs_compile else "")
                  + (f" | median {pct(s.median_sol)} of SOL" if s.median_sol else "")
                  + (f" | {s.uninformative} on uninformative problems, in no rate" if s.uninformative else "")
                  + (f" | [bold red]{s.harness_errors} harness errors, no verdict[/]" if s.harness_errors else ""),
                  highlight=False)
    if board.flagged:
        correct = s.funnel.correct if s.funnel else len(board.flagged)
        console.print(f"[yellow]{escape(flagged_line((f.flags for f in board.flagged), correct))}[/]",
                      highlight=False)
        console.print(f"[dim]{escape(LEGEND)}[/]", highlight=False)
    if any(row.best_speedup and row.best_vs_compile is None for row in board.problems):
        console.print("[dim]vs compile: `harness baseline` measures the torch.compile baselines[/]")


def _apart(console: Console, width: int | None, title: str, columns: tuple[Column, ...],
           rows: list[tuple[str, ...]]) -> None:
    """A table of results set apart from the verdicts: problem, candidate, then `columns`."""
    print_table(console, (*APART_COLUMNS, *columns), rows, width=width, title=title)


def render_runs(summaries: list[Summary], console: Console, width: int | None = None) -> None:
    """Runs side by side, one row each; fitted to `width` (None: whole)."""
    rows = [(escape(s.run), escape(s.model or "-"), escape(s.device or "-"), s.dtype or "-", str(s.problems),
             pct(s.correct_rate), *(pct(s.fast_p.get(f"{p:g}")) for p in FAST_P), times(s.geomean_speedup),
             times(s.geomean_vs_compile), pct(s.median_sol), f"{s.tokens:,}" if s.tokens is not None else "-",
             f"${s.cost_usd:,.4f}" if s.cost_usd is not None else "-") for s in summaries]
    print_table(console, RUN_COLUMNS, rows, width=width,
                title="leaderboard (counted results only; `--run NAME` for one run's problems)")
    flagged = [s for s in summaries if s.flagged]
    if flagged:
        console.print("[yellow]" + escape("; ".join(f"{s.run}: {s.flagged} flagged, not counted" for s in flagged))
                      + "[/] [dim](`--run NAME` says why)[/]", highlight=False)


def summary_record(s: Summary) -> dict:
    """A flat record of a run's summary (one CSV row)."""
    flat = s.model_dump(exclude={"fast_p", "statuses", "funnel"})
    flat.update({f"fast_{p}": v for p, v in s.fast_p.items()})
    flat.update({f"funnel_{k}": v for k, v in (s.funnel.model_dump() if s.funnel else {}).items()})
    flat.update({f"status_{k}": s.statuses.get(k, 0) for k in VERDICTS})
    return flat


def problem_record(run: str, row: ProblemRow) -> dict:
    flat = {"run": run, **row.model_dump(exclude={"statuses", "flags"})}
    flat.update({f"status_{k}": row.statuses.get(k, 0) for k in VERDICTS})
    flat["flags"] = ";".join(row.flags)
    return flat


def to_csv(records: list[dict]) -> str:
    if not records:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()
