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
import math
import re
from datetime import datetime, timezone
from pathlib import Path

import jinja2
from markupsafe import Markup

from harness.eval.roofline import beats_light
from harness.figures import Figure
from harness.report.labels import not_counted
from harness.report.leaderboard import FAST_P, Leaderboard, ProblemRow, Summary
from harness.report.plots import PALETTE, fastp_plot, fmt_pct, fmt_x, funnel_plot, speedups_plot

__all__ = ["breakable", "fmt_figure", "fmt_pct", "fmt_x", "render_html"]

TEMPLATE_DIR = Path(__file__).parents[1] / "templates"
# .tmpl, not .j2: pyproject's package-data ships templates/*.tmpl, so the templates are in the wheel too
TEMPLATE = "report.html.tmpl"
NOT_COUNTED = "measured, not counted (flagged)"  # what "(0.70x)" means; report.js.tmpl says the same


def render_html(boards: list[Leaderboard], *, title: str = "kernel-harness report",
                generated_at: str | None = None, details: dict | None = None) -> str:
    """One HTML document showing these runs side by side; nothing in it is fetched at view time. `details`
    (details.report_details for the same runs) adds the pages behind each problem, candidate and conversation."""
    generated_at = generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(boards))]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["breakable"] = breakable
    return env.get_template(TEMPLATE).render(
        title=title, generated_at=generated_at,
        devices=list(dict.fromkeys(b.summary.device for b in boards if b.summary.device)),
        leaderboard=[_summary_row(b.summary, c, i) for i, (b, c) in enumerate(zip(boards, colours))],
        fast_p_columns=[f"fast_{p:g}" for p in FAST_P],
        plots=[fastp_plot(boards, colours), speedups_plot(boards, colours), funnel_plot(boards, colours)]
        if boards else [],
        runs=[_run_view(b, c, i) for i, (b, c) in enumerate(zip(boards, colours))],
        colours=colours, details=pack(details) if details is not None else "", not_counted=NOT_COUNTED,
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


def significant(v: float, digits: int = 3) -> str:
    """`digits` significant figures, never an exponent, no trailing zeros: 21.4, 0.0312, 1235."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_figure(f: Figure) -> str:
    """A measured figure in its unit: counts as counts, shares as %, seconds and ms to three figures."""
    if f.unit == "count":
        return f"{f.value:.0f}"
    if f.unit == "share":
        return fmt_pct(f.value)
    return f"{significant(f.value)} {f.unit}"


BREAK_AFTER = re.compile(r"(?<=[/_ ])")


def breakable(name: object) -> Markup:
    """A name (problem id, run, model, file path) escaped, in parts that never wrap (`.nb`: white-space nowrap)
    ending at each /, _ or space, with a line-break opportunity between them: a narrow table cell wraps it there,
    never inside a word, nor at a hyphen (gpt-4o-mini stays whole)."""
    parts = [part for part in BREAK_AFTER.split(str(name)) if part]
    return Markup("<wbr>").join(Markup('<span class="nb">{}</span>').format(part) for part in parts)


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


NO_CEILING = ("no speed of light known: the problem's bytes and FLOPs or the device's peaks are missing (on a cpu, "
              "a copy measured while other processes used the cores is no memory ceiling)")
BEYOND_LIGHT = "faster than the speed of light allows (what the faster_than_light flag marks): no share of it"


def _sol_bars(row: ProblemRow, colour: str) -> list[dict] | None:
    """The % of speed of light of eager, torch.compile and the best candidate; None when no ceiling is known. A
    share is at most 100 %; a time that beats the ceiling shows as >100 %, marked, with no bar."""
    if row.sol_ms is None:
        return None
    compile_tip = f"torch.compile {row.compile_kind}" if row.compile_kind else "torch.compile"
    bars = [("eager", "eager PyTorch", row.eager_ms, row.eager_sol_fraction, "#8a8a8a"),
            ("compile", compile_tip, row.compile_ms, row.compile_sol_fraction, "#4d4d4d"),
            ("best", f"best candidate {row.best_candidate or ''}".strip(), row.best_runtime_ms, row.sol_fraction,
             colour)]
    shown = []
    for label, tip, ms, fraction, fill in bars:
        over = beats_light(row.sol_ms, ms)
        shown.append({"label": label, "tip": f"{tip}: {BEYOND_LIGHT}" if over else tip, "over": over,
                      "text": ">100%" if over else fmt_pct(fraction), "colour": fill,
                      "width": 0.0 if fraction is None else round(fraction * 100, 1)})
    return shown


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
        "sol": _sol_bars(row, colour), "sol_sort": _sort_key(row.sol_fraction), "sol_why": NO_CEILING,
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
        "flagged": [{"problem": f.problem, "candidate": f.candidate, "speedup": not_counted(f.speedup),
                     "speedup_sort": _sort_key(f.speedup), "ms": fmt_ms(f.runtime_ms),
                     "ms_sort": _sort_key(f.runtime_ms), "flags": list(f.flags)} for f in board.flagged],
        "harness_errors": [{"problem": h.problem, "candidate": h.candidate, "error": h.error or "-"}
                           for h in board.harness_errors],
        "uninformative": [{"problem": u.problem, "candidate": u.candidate, "status": u.status, "reason": u.reason}
                          for u in board.uninformative],
    }
