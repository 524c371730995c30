"""The report's plots, drawn here as inline SVG (no plotting library): the fast_p curves, the distribution of
counted speedups and the funnel, and the SVG primitives they share. Every piece of text that reaches an SVG goes
through `_esc`. Never imports torch.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from statistics import median

from markupsafe import Markup

from harness.report.labels import times as fmt_x
from harness.report.leaderboard import Funnel, Leaderboard

# Okabe-Ito colours: told apart under the common colour-vision deficiencies (its yellow is unreadable on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#999933")
FUNNEL_STAGES = (("generated", "generated"), ("with_code", "with code"), ("compiled", "compiled"),
                 ("correct", "correct"), ("faster", "faster"))
SPEEDUP_RANGE = (1 / 8, 16.0)  # the strip plot's log2 axis; speedups outside are drawn at its edge
FASTP_X_CAP = 10.0  # past 10x the fast_p curve says nothing new, and a linear axis to 40x hides 0..2x
NAME_CHARS = 26  # run names longer than this are shortened in plots (the full name is in a tooltip)
WIDTH = 1180  # of every plot, in px: the width of the page's tables


def fmt_pct(v: float | None) -> str:
    """75%; one decimal under 10% so that a small share of the speed of light does not read 0%."""
    if v is None:
        return "-"
    return f"{v:.1%}" if 0 < abs(v) < 0.1 else f"{v:.0%}"


def short(name: str, limit: int = NAME_CHARS) -> str:
    """The name, or its start and end around an ellipsis: runs often differ only in a suffix (-turn3, -seed2)."""
    if len(name) <= limit:
        return name
    head = (limit - 1) // 2
    return name[:head] + "\u2026" + name[len(name) - (limit - 1 - head):]


# ---- SVG primitives ----

def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(v: float) -> str:
    """A coordinate: short, and never '-0.0'."""
    return f"{v + 0.0:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Axes:
    """A plot area inside an SVG: maps data values to pixels (y grows upwards, x linear or log2)."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    log_x: bool = False

    def x(self, v: float) -> float:
        lo, hi = (math.log2(self.x0), math.log2(self.x1)) if self.log_x else (self.x0, self.x1)
        v = math.log2(v) if self.log_x else v
        return self.left + (v - lo) / (hi - lo) * (self.width - self.left - self.right)

    def y(self, v: float) -> float:
        return self.height - self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.height - self.top - self.bottom)

    @property
    def x_end(self) -> float:
        return self.width - self.right

    @property
    def y_end(self) -> float:
        return self.height - self.bottom


def svg(plot: str, title: str, width: int, height: int, body: list[str]) -> Markup:
    """The outer <svg>: scales down with the page (viewBox), named by its <title> for tooltips and readers."""
    return Markup(f'<svg class="plot" data-plot="{_esc(plot)}" viewBox="0 0 {width} {height}" width="{width}" '
                  f'height="{height}" role="img"><title>{_esc(title)}</title>{"".join(body)}</svg>')


def text(x: float, y: float, content: object, *, anchor: str = "start", cls: str = "", tip: str = "") -> str:
    klass = f' class="{_esc(cls)}"' if cls else ""
    tooltip = f"<title>{_esc(tip)}</title>" if tip else ""
    return f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}"{klass}>{tooltip}{_esc(content)}</text>'


def line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" class="{_esc(cls)}"/>'


def polyline(points: list[tuple[float, float]], colour: str, run: str, dash: str = "") -> str:
    coords = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<polyline points="{coords}" fill="none" stroke="{colour}"{dashes} class="curve" '
            f'data-run="{_esc(run)}"/>')


def dash_of(index: int) -> str:
    """Past the palette's colours, curves repeat them dashed, so that no two runs draw alike."""
    return ("", "7 4", "2 3", "10 3 2 3")[index // len(PALETTE) % 4]


def x_axis(ax: Axes, ticks: list[tuple[float, str]], label: str) -> list[str]:
    """Gridlines, tick labels under the plot area, and the axis label below them."""
    parts = [line(ax.left, ax.y_end, ax.x_end, ax.y_end, "axis")]
    for v, tick in ticks:
        x = ax.x(v)
        parts += [line(x, ax.top, x, ax.y_end, "grid"), line(x, ax.y_end, x, ax.y_end + 4, "axis"),
                  text(x, ax.y_end + 17, tick, anchor="middle", cls="tick")]
    parts.append(text((ax.left + ax.x_end) / 2, ax.height - 6, label, anchor="middle", cls="label"))
    return parts


def y_axis(ax: Axes, ticks: list[tuple[float, str]], label: str) -> list[str]:
    parts = [line(ax.left, ax.top, ax.left, ax.y_end, "axis")]
    for v, tick in ticks:
        y = ax.y(v)
        parts += [line(ax.left, y, ax.x_end, y, "grid"), text(ax.left - 6, y + 4, tick, anchor="end", cls="tick")]
    mid = (ax.top + ax.y_end) / 2
    parts.append(f'<text x="14" y="{_n(mid)}" text-anchor="middle" class="label" '
                 f'transform="rotate(-90 14 {_n(mid)})">{_esc(label)}</text>')
    return parts


def legend(x: float, y: float, items: list[tuple[str, str, str]]) -> list[str]:
    """(run, colour, detail) entries stacked from (x, y): the run's line, its name and a detail line under it."""
    parts = []
    for i, (run, colour, detail) in enumerate(items):
        top = y + i * 40
        dash = dash_of(i)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<g class="legend" data-run="{_esc(run)}">'
                     f'<line x1="{_n(x)}" y1="{_n(top + 7)}" x2="{_n(x + 22)}" y2="{_n(top + 7)}" stroke="{colour}" '
                     f'stroke-width="4"{dashes}/>'
                     + text(x + 30, top + 11, short(run), cls="legend-name", tip=run)
                     + text(x + 30, top + 27, detail, cls="legend-detail") + "</g>")
    return parts


def linear_ticks(lo: float, hi: float, most: int = 8) -> list[float]:
    """Round tick values covering [lo, hi], at most `most` + 1 of them."""
    step = next((s for s in (0.1, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100) if (hi - lo) / s <= most),
                10 ** math.ceil(math.log10(hi - lo)))
    first = math.ceil(lo / step - 1e-9) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def log2_label(v: float) -> str:
    return f"{v:g}x" if v >= 1 else f"1/{round(1 / v)}x"


# ---- the plots ----

def fastp_curve(bests: list[float], problems: int, x_max: float) -> list[tuple[float, float]]:
    """(p, share of problems whose best counted speedup is > p) from 0 to x_max, as exact steps."""
    if problems == 0:
        return []
    def share(above):
        return sum(map(above, bests)) / problems
    points = [(0.0, share(lambda b: b > 0))]
    for s in sorted({b for b in bests if 0 < b < x_max}):
        # just before s, b == s still counts (b > p); at s it no longer does: a vertical step
        points += [(s, share(lambda b, s=s: b >= s)), (s, share(lambda b, s=s: b > s))]
    points.append((x_max, share(lambda b: b > x_max)))
    return points


def fastp_plot(boards: list[Leaderboard], colours: list[str]) -> Markup:
    """fast_p as a curve: the share of a run's problems with a counted speedup over p, for every p."""
    bests = [[r.best_speedup for r in b.problems if r.best_speedup is not None] for b in boards]
    largest = max((v for run in bests for v in run), default=0.0)
    x_max = min(max(2.5, 1.1 * largest), FASTP_X_CAP)
    # taller with many runs: the legend to the right holds 40 px per run
    ax = Axes(width=WIDTH, height=max(360, 24 + 40 * len(boards) + 48), left=64, right=260, top=24, bottom=48,
              x1=x_max)
    body = (x_axis(ax, [(t, f"{t:g}x") for t in linear_ticks(0, x_max)], "speedup threshold p (over eager)")
            + y_axis(ax, [(t / 100, f"{t}%") for t in (0, 25, 50, 75, 100)], "problems with best > p"))
    body += [line(ax.x(1), ax.top, ax.x(1), ax.y_end, "marker"),
             text(ax.x(1) + 4, ax.top + 12, "p = 1 (fast_1)", cls="marker-label")]
    items = []
    for i, (board, run_bests, colour) in enumerate(zip(boards, bests, colours)):
        s = board.summary
        points = fastp_curve(run_bests, s.problems, x_max)
        if points:
            body.append(polyline([(ax.x(p), ax.y(f)) for p, f in points], colour, s.run, dash_of(i)))
            at_1 = s.fast_p.get("1", 0.0)
            body.append(f'<circle cx="{_n(ax.x(1))}" cy="{_n(ax.y(at_1))}" r="4" fill="{colour}" '
                        f'data-run="{_esc(s.run)}"><title>{_esc(f"{s.run}: fast_1 = {fmt_pct(at_1)}")}</title>'
                        f'</circle>')
        detail = (f"fast_1 {fmt_pct(s.fast_p.get('1'))} \u00b7 geomean {fmt_x(s.geomean_speedup)}"
                  if s.problems else "no problems")
        items.append((s.run, colour, detail))
    body += legend(ax.x_end + 20, ax.top, items)
    if largest > x_max:
        body.append(text(ax.x_end, ax.top - 8, f"axis stops at {x_max:g}x (largest best: {largest:.1f}x)",
                         anchor="end", cls="note"))
    return svg("fastp", "fast_p: share of problems whose best counted speedup over eager is above p", ax.width,
               ax.height, body)


def jitter(i: int) -> float:
    """A deterministic spread in [-0.5, 0.5): the golden-ratio sequence fills a band evenly, without a RNG."""
    return (i * 0.6180339887) % 1.0 - 0.5


def _speedup_band(ax: Axes, run: str, values: list[float], colour: str, mid: float, band: int) -> list[str]:
    """One run's row of the strip plot: its name, a dot per speedup, the median, and n / median at the right."""
    lo, hi = ax.x0, ax.x1
    parts = [text(ax.left - 12, mid + 4, short(run), anchor="end", cls="row-name", tip=run)]
    if not values:
        return parts + [text(ax.left + 12, mid + 4, "no counted results", cls="note")]
    for j, v in enumerate(values):
        clamped = min(max(v, lo), hi)
        style = f'fill="white" stroke="{colour}"' if clamped != v else f'fill="{colour}" stroke="{colour}"'
        parts.append(f'<circle cx="{_n(ax.x(clamped))}" cy="{_n(mid + jitter(j) * band * 0.7)}" r="3.5" {style} '
                     f'class="dot"><title>{_esc(fmt_x(v))}</title></circle>')
    middle = median(values)
    m = ax.x(min(max(middle, lo), hi))
    return parts + [line(m, mid - band * 0.42, m, mid + band * 0.42, "median"),
                    text(ax.x_end + 12, mid + 4, f"n={len(values)} \u00b7 median {fmt_x(middle)}", cls="row-detail")]


def speedups_plot(boards: list[Leaderboard], colours: list[str]) -> Markup:
    """Every counted speedup of each run as a jittered strip on a log2 axis, its median marked."""
    band = 56
    lo, hi = SPEEDUP_RANGE
    ax = Axes(width=WIDTH, height=52 + band * len(boards) + 40, left=210, right=180, top=30, bottom=48,
              x0=lo, x1=hi, log_x=True)
    ticks = [(2.0 ** k, log2_label(2.0 ** k)) for k in range(round(math.log2(lo)), round(math.log2(hi)) + 1)]
    mids = [ax.top + band * (i + 0.5) + 4 for i in range(len(boards))]
    # every other run's row shaded, so that a dot is read against its own run; drawn first, under the grid
    body = [f'<rect x="{ax.left}" y="{_n(mid - band / 2)}" width="{_n(ax.x_end - ax.left)}" height="{band}" '
            f'class="band"/>' for mid in mids[::2]]
    body += x_axis(ax, ticks, "speedup over eager (log scale; beyond the ends drawn at the edge, hollow)")
    body += [line(ax.x(1), ax.top - 6, ax.x(1), ax.y_end, "marker"),
             text(ax.x(1) - 6, ax.top - 12, "\u2190 slower", anchor="end", cls="marker-label"),
             text(ax.x(1) + 6, ax.top - 12, "faster \u2192", cls="marker-label")]
    for board, colour, mid in zip(boards, colours, mids):
        body.append(f'<g data-run="{_esc(board.summary.run)}">'
                    + "".join(_speedup_band(ax, board.summary.run, board.speedups, colour, mid, band)) + "</g>")
    return svg("speedups", "Distribution of counted speedups over eager, per run", ax.width, ax.height, body)


FUNNEL_BAR, FUNNEL_GAP, FUNNEL_HEAD, FUNNEL_LEFT, FUNNEL_BAR_MAX = 18, 4, 26, 130, 820


def _funnel_block(run: str, funnel: Funnel | None, colour: str, top: float) -> tuple[list[str], float]:
    """One run's part of the funnel (its name, a bar per stage, count and share of generated); and its height."""
    bar, gap, head, left = FUNNEL_BAR, FUNNEL_GAP, FUNNEL_HEAD, FUNNEL_LEFT
    parts = [text(0, top + 14, short(run, 60), cls="row-name", tip=run)]
    if funnel is None:
        return parts + [text(left, top + head + 12, "no funnel recorded for this run", cls="note")], head + 32
    for k, (field, label) in enumerate(FUNNEL_STAGES):
        count, y = getattr(funnel, field), top + head + k * (bar + gap)
        share = count / funnel.generated if funnel.generated else 0.0
        w = max(share * FUNNEL_BAR_MAX, 1.0 if count else 0.0)  # a hairline for a few candidates, none for zero
        parts += [text(left - 10, y + 13, label, anchor="end", cls="tick"),
                  (f'<rect x="{left}" y="{_n(y)}" width="{_n(w)}" height="{bar}" fill="{colour}" class="bar" '
                   f'data-run="{_esc(run)}" data-stage="{field}" data-count="{count}">'
                   f'<title>{_esc(f"{run}: {label} {count}")}</title></rect>'),
                  (f'<text x="{_n(left + w + 8)}" y="{_n(y + 13)}" class="count-label">'
                   f'<tspan class="count">{count}</tspan>'
                   + (f'<tspan class="share"> \u00b7 {fmt_pct(share)} of generated</tspan>' if k else "") + "</text>")]
    return parts, head + len(FUNNEL_STAGES) * (bar + gap) + 14


def funnel_plot(boards: list[Leaderboard], colours: list[str]) -> Markup:
    """Per run, candidates at each stage, the bars scaled to the run's generated count."""
    body, top = [], 12.0
    for board, colour in zip(boards, colours):
        parts, height = _funnel_block(board.summary.run, board.summary.funnel, colour, top)
        body.append(f'<g data-run="{_esc(board.summary.run)}">{"".join(parts)}</g>')
        top += height
    return svg("funnel", "Funnel: candidates generated, with code, compiled, correct, and counted faster than eager",
               WIDTH, round(top), body)
