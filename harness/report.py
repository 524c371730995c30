"""Leaderboard: per-problem best speedups and run-level summary numbers; rich tables or JSON.

Never imports torch.
"""

from __future__ import annotations

import math
from collections import Counter

from pydantic import Field
from rich.console import Console
from rich.table import Table

from .types import STATUSES, EvalResult, Frozen

FAST_P = (0.0, 1.0, 1.5, 2.0)


class ProblemRow(Frozen):
    problem: str = Field(description="Problem id")
    candidates: int = Field(description="Candidates evaluated on it")
    statuses: dict[str, int] = Field(description="Candidates per status")
    best_speedup: float | None = Field(description="Best speedup of a correct candidate")
    best_runtime_ms: float | None = Field(description="Median runtime of that candidate")
    ref_runtime_ms: float | None = Field(description="Reference median measured beside it")
    best_candidate: str | None = Field(description="Path (or hash prefix) of that candidate")
    flags: tuple[str, ...] = Field(description="Flags raised on the best candidate")


class FlaggedRow(Frozen):
    problem: str = Field(description="Problem id")
    candidate: str = Field(description="Path (or hash prefix) of the candidate")
    speedup: float | None = Field(description="The speedup it claimed")
    runtime_ms: float | None = Field(description="Its median runtime")
    flags: tuple[str, ...] = Field(description="Why its speed is not trusted")


class Summary(Frozen):
    run: str = Field(description="Run name")
    problems: int = Field(description="Distinct problems in the run")
    candidates: int = Field(description="Evaluations in the run")
    compile_rate: float | None = Field(description="Share of candidates with code whose build succeeded")
    correct_rate: float | None = Field(description="Share of candidates that are correct")
    fast_p: dict[str, float] = Field(description="Share of problems with a counted candidate faster than p x")
    geomean_speedup: float | None = Field(description="Geometric mean speedup over counted candidates")
    flagged: int = Field(description="Correct candidates not counted: their speed is flagged as untrustworthy")
    statuses: dict[str, int] = Field(description="Candidates per status")


class Leaderboard(Frozen):
    summary: Summary
    problems: list[ProblemRow]
    flagged: list[FlaggedRow] = Field(description="Correct results left out of every number above")


def leaderboard(run: str, results: list[EvalResult]) -> Leaderboard:
    by_problem: dict[str, list[EvalResult]] = {}
    for r in results:
        by_problem.setdefault(r.problem_id, []).append(r)
    rows = []
    best_by_problem: dict[str, float] = {}
    for problem, items in by_problem.items():
        best = max((r for r in items if r.counted), key=lambda r: r.speedup, default=None)
        if best:
            best_by_problem[problem] = best.speedup
        rows.append(ProblemRow(
            problem=problem, candidates=len(items), statuses=dict(Counter(r.status for r in items)),
            best_speedup=best.speedup if best else None, best_runtime_ms=best.runtime_ms if best else None,
            ref_runtime_ms=best.ref_runtime_ms if best else None, best_candidate=best.candidate_label if best else None,
            flags=best.flags if best else ()))
    with_code = [r for r in results if r.status != "no_code"]
    built = [r for r in with_code if r.build is not None and r.build.status == "ok"]
    speedups = [r.speedup for r in results if r.counted]
    flagged = [FlaggedRow(problem=r.problem_id, candidate=r.candidate_label, speedup=r.speedup,
                          runtime_ms=r.runtime_ms, flags=r.flags)
               for r in results if r.status == "correct" and not r.counted]
    n_problems = len(by_problem)
    summary = Summary(
        run=run, problems=n_problems, candidates=len(results),
        compile_rate=len(built) / len(with_code) if with_code else None,
        correct_rate=sum(r.status == "correct" for r in results) / len(results) if results else None,
        fast_p={f"{p:g}": (sum(s > p for s in best_by_problem.values()) / n_problems if n_problems else 0.0)
                for p in FAST_P},
        geomean_speedup=math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None,
        statuses={s: n for s in STATUSES if (n := sum(r.status == s for r in results))},
        flagged=len(flagged),
    )
    return Leaderboard(summary=summary, problems=rows, flagged=flagged)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _x(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


STATUS_STYLE = {"correct": "green", "incorrect": "red", "compile_error": "yellow", "runtime_error": "magenta",
                "timeout": "magenta", "rejected": "red", "no_code": "dim"}


def render(board: Leaderboard, console: Console) -> None:
    table = Table(title=f"run {board.summary.run}", title_justify="left")
    for name, justify in (("problem", "left"), ("cands", "right"), ("best speedup", "right"),
                          ("ref ms", "right"), ("best ms", "right"), ("statuses", "left"), ("flags", "left")):
        table.add_column(name, justify=justify)
    for row in board.problems:
        statuses = " ".join(f"[{STATUS_STYLE[s]}]{s} {n}[/]" for s, n in row.statuses.items())
        table.add_row(row.problem, str(row.candidates), _x(row.best_speedup), _ms(row.ref_runtime_ms),
                      _ms(row.best_runtime_ms), statuses, ", ".join(row.flags))
    console.print(table)
    if board.flagged:
        flagged = Table(title="flagged: correct, but not counted (speed not trusted)", title_justify="left")
        for name, justify in (("problem", "left"), ("candidate", "left"), ("claimed speedup", "right"),
                              ("ms", "right"), ("flags", "left")):
            flagged.add_column(name, justify=justify)
        for row in board.flagged:
            flagged.add_row(row.problem, row.candidate, _x(row.speedup), _ms(row.runtime_ms),
                            f"[red]{', '.join(row.flags)}[/]")
        console.print(flagged)
    s = board.summary
    fast = "  ".join(f"fast_{p}={_pct(v)}" for p, v in s.fast_p.items())
    console.print(f"{s.problems} problems, {s.candidates} candidates | compiled {_pct(s.compile_rate)} | "
                  f"correct {_pct(s.correct_rate)} | {fast} | geomean speedup {_x(s.geomean_speedup)}"
                  + (f" | {s.flagged} flagged, not counted" if s.flagged else ""))
