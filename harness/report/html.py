"""A self-contained HTML report of runs: the leaderboard, per-problem tables, plots, and a page for every
problem, candidate and conversation.

One file that reads the same offline, attached to a CI job or mailed: CSS, the script and the plots (inline SVG,
plots.py) are inline, and a Content-Security-Policy forbids the page to fetch anything. The overview is the
template templates/report.html.tmpl (autoescaped); the drill-down views are drawn by its script
(templates/report.js.tmpl) from the store's details (details.py), carried gzip-compressed and base64-encoded in
the page (a run's sources and conversations shrink about tenfold, and base64 needs no escaping inside <script>).
Never imports torch.
"""

from __future__ import annotations

import base64
import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from harness.report.leaderboard import FAST_P, Leaderboard, ProblemRow, Summary
from harness.report.plots import PALETTE, fastp_plot, fmt_pct, fmt_x, funnel_plot, speedups_plot

__all__ = ["fmt_pct", "fmt_x", "render_html"]

TEMPLATE_DIR = Path(__file__).parents[1] / "templates"
# .tmpl, not .j2: pyproject's package-data ships templates/*.tmpl, so the templates are in the wheel too
TEMPLATE = "report.html.tmpl"


def render_html(boards: list[Leaderboard], *, title: str = "kernel-harness report",
                generated_at: str | None = None, details: dict | None = None) -> str:
    """One HTML document showing these runs side by side; nothing in it is fetched at view time. `details`
    (details.report_details for the same runs) adds the pages behind each problem, candidate and conversation."""
    generated_at = generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(boards))]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    return env.get_template(TEMPLATE).render(
        title=title, generated_at=generated_at,
        devices=list(dict.fromkeys(b.summary.device for b in boards if b.summary.device)),
        leaderboard=[_summary_row(b.summary, c, i) for i, (b, c) in enumerate(zip(boards, colours))],
        fast_p_columns=[f"fast_{p:g}" for p in FAST_P],
        plots=[fastp_plot(boards, colours), speedups_plot(boards, colours), funnel_plot(boards, colours)]
        if boards else [],
        runs=[_run_view(b, c, i) for i, (b, c) in enumerate(zip(boards, colours))],
        colours=colours, details=pack(details) if details is not None else "",
    )


def pack(details: dict) -> str:
    """The details as the page carries them: JSON, gzip (mtime 0: the same store gives the same page), base64."""
    raw = json.dumps(details, separators=(",", ":"), allow_nan=False, default=str).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def unpack(packed: str) -> dict:
    """What the page's script reads back (for tests)."""
    return json.loads(gzip.decompress(base64.b64decode(packed)))


# ---- display strings ----

def fmt_ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def fmt_cost(v: float | None) -> str:
    return "-" if v is None else f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


def _sort_key(v: float | None) -> str:
    """What the sorting script compares: a number, or '' (no data, always last)."""
    return "" if v is None else repr(float(v))


# ---- tables ----

def _summary_row(s: Summary, colour: str, index: int) -> dict:
    """One run of the leaderboard table: its cells as (text, sort key)."""
    def num(text: str, v: float | None) -> dict:
        return {"text": text, "sort": _sort_key(v)}
    fast = [s.fast_p.get(f"{p:g}") for p in FAST_P]
    return {
        "run": s.run, "colour": colour, "anchor": f"run-{index}",
        "cells": [{"text": s.model or "-", "sort": s.model or ""}, {"text": s.dtype or "-", "sort": s.dtype or ""},
                  num(str(s.problems), s.problems),
                  num(str(s.candidates), s.candidates), num(fmt_pct(s.correct_rate), s.correct_rate),
                  *(num(fmt_pct(v), v) for v in fast),
                  num(fmt_x(s.geomean_speedup), s.geomean_speedup),
                  num(fmt_x(s.geomean_vs_compile), s.geomean_vs_compile),
                  num(fmt_pct(s.median_sol), s.median_sol), num(str(s.flagged), s.flagged),
                  num(f"{s.tokens:,}" if s.tokens is not None else "-", s.tokens),
                  num(fmt_cost(s.cost_usd), s.cost_usd)],
    }


def _sol_bars(row: ProblemRow, colour: str) -> list[dict] | None:
    """The % of speed of light of eager, torch.compile and the best candidate; None when none is known."""
    compile_tip = f"torch.compile {row.compile_kind}" if row.compile_kind else "torch.compile"
    bars = [("eager", "eager PyTorch", row.eager_sol_fraction, "#8a8a8a"),
            ("compile", compile_tip, row.compile_sol_fraction, "#4d4d4d"),
            ("best", f"best candidate {row.best_candidate or ''}".strip(), row.sol_fraction, colour)]
    if all(f is None for _, _, f, _ in bars):
        return None
    # the bar stops at 100% (beyond is a measurement to doubt, not a longer bar); the number is as measured
    return [{"label": label, "tip": tip, "text": fmt_pct(f), "over": f is not None and f > 1, "colour": c,
             "width": 0.0 if f is None else round(min(max(f, 0.0), 1.0) * 100, 1)} for label, tip, f, c in bars]


def _problem_view(row: ProblemRow, colour: str) -> dict:
    return {
        "problem": row.problem, "candidates": row.candidates,
        "best": fmt_x(row.best_speedup), "best_sort": _sort_key(row.best_speedup),
        "best_candidate": row.best_candidate or "",
        "vs_compile": fmt_x(row.best_vs_compile), "vs_compile_sort": _sort_key(row.best_vs_compile),
        "best_ms": fmt_ms(row.best_runtime_ms), "best_ms_sort": _sort_key(row.best_runtime_ms),
        "eager_ms": fmt_ms(row.eager_ms), "eager_ms_sort": _sort_key(row.eager_ms),
        "compile_ms": fmt_ms(row.compile_ms), "compile_ms_sort": _sort_key(row.compile_ms),
        "compile_kind": row.compile_kind or "",
        "sol": _sol_bars(row, colour), "sol_sort": _sort_key(row.sol_fraction),
        "coverage": fmt_pct(row.best_coverage), "coverage_sort": _sort_key(row.best_coverage),
        "statuses": sorted(row.statuses.items(), key=lambda kv: -kv[1]),
        "flags": list(row.flags),
    }


def _run_view(board: Leaderboard, colour: str, index: int) -> dict:
    s = board.summary
    return {
        "name": s.run, "colour": colour, "anchor": f"run-{index}", "index": index, "model": s.model, "device": s.device,
        "dtype": s.dtype,
        "problems_count": s.problems, "candidates": s.candidates, "statuses": list(s.statuses.items()),
        "problems": [_problem_view(row, colour) for row in board.problems],
        "flagged": [{"problem": f.problem, "candidate": f.candidate, "speedup": fmt_x(f.speedup),
                     "speedup_sort": _sort_key(f.speedup), "ms": fmt_ms(f.runtime_ms),
                     "ms_sort": _sort_key(f.runtime_ms), "flags": list(f.flags)} for f in board.flagged],
        "harness_errors": [{"problem": h.problem, "candidate": h.candidate, "error": h.error or "-"}
                           for h in board.harness_errors],
        "uninformative": [{"problem": u.problem, "candidate": u.candidate, "status": u.status, "reason": u.reason}
                          for u in board.uninformative],
    }
