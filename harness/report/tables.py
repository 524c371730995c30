"""Tables that fit the terminal. Each table declares its columns once (`Column`: header, kind, and when it gives
way); `fit` lays them out for a width and says what it left out, and `print_table` prints the table and that line.

How a column gives way when the terminal is narrow, in the order of `gives_way` (highest first; 0 never): a short
header first for every column, then a path loses its leading folders ("…/"), a one-line text is cut at a word
("…"), and any other column is left out. Names (runs, problems, models) are never cut: they are what a reader
types again. Free text wraps at its words. Without a width (`--wide`, or stdout piped without $COLUMNS) every
column is printed whole, however wide the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

# name: on one line, whole (a name, or a list such as flags that is read whole or not at all); path: whole, or loses
# leading folders; number: right-aligned, whole; text: prose, wraps at words; line: one line, cut at a word
Kind = Literal["name", "path", "number", "text", "line"]
SHRINKS = ("path", "line")
ELLIPSIS = "…"
MIN_LINE = 12  # a path or a text with less room than this says nothing: it is left out instead


@dataclass(frozen=True)
class Column:
    header: str
    kind: Kind = "number"
    gives_way: int = 0  # 0: always shown whole; else the order it gives way in, highest first
    short: str | None = None  # the header when room is short


@dataclass(frozen=True)
class Fitted:
    """A table laid out for a width: the columns shown, their cells and widths, and what gave way."""

    columns: tuple[Column, ...]
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    widths: tuple[int, ...]
    left_out: tuple[str, ...]  # headers of the columns not shown
    shortened: tuple[str, ...]  # headers of the columns whose cells were cut

    @property
    def width(self) -> int:
        return frame(self.widths)


def frame(widths: Sequence[int]) -> int:
    """The printed width of a rich table (heavy head, edges, padding 1) with these content widths."""
    return sum(widths) + 3 * len(widths) + 1


def plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _widest(texts: Sequence[str]) -> int:
    return max((Text(line).cell_len for t in texts for line in t.splitlines() or [""]), default=0)


def _longest_word(texts: Sequence[str]) -> int:
    return max((Text(word).cell_len for t in texts for word in t.split()), default=0)


def shorten_path(path: str, room: int) -> str:
    """`path` within `room` columns, losing leading folders first; its last part is kept whole even if wider."""
    if len(path) <= room:
        return path
    parts = path.split("/")
    for start in range(1, len(parts)):
        cut = ELLIPSIS + "/" + "/".join(parts[start:])
        if len(cut) <= room:
            return cut
    return ELLIPSIS + "/" + parts[-1] if len(parts) > 1 else path


def shorten_line(text: str, room: int) -> str:
    """`text` within `room` columns, cut after a whole word."""
    if len(text) <= room:
        return text
    head = text[:room - 1]
    if " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + ELLIPSIS


@dataclass(eq=False)  # compared by identity: two columns may hold the same cells
class _Part:
    """One column while a layout is worked out: its cells (markup and plain) and the width it is given."""

    column: Column
    header: str
    cells: list[str]
    texts: list[str]
    cut: bool = False

    @property
    def whole(self) -> int:
        return _widest([self.header, *self.texts])

    @property
    def least(self) -> int:  # the narrowest it can be printed in: a wrapping text at its longest word
        return max(_longest_word([self.header, *self.texts]), 1) if self.column.kind == "text" else self.whole


def _shrink(parts: list[_Part], shrinking: list[_Part], width: int) -> list[_Part]:
    """Paths and one-line texts take the room the other columns leave: the one that gives way last first, and
    those that give way together share it, the narrowest first; one left too little room for a word or a path's
    last part is left out."""
    room = width - frame([p.least for p in parts if p not in shrinking]) - 3 * len(shrinking)
    order = sorted(shrinking, key=lambda p: (p.column.gives_way, p.whole))
    for n, part in enumerate(order):
        share = room // sum(p.column.gives_way == part.column.gives_way for p in order[n:])
        shorten = shorten_path if part.column.kind == "path" else shorten_line
        new = [shorten(text, share) for text in part.texts]
        if share < MIN_LINE or _widest(new) > share:
            parts = [p for p in parts if p is not part]
            room += 3  # its frame is free too
            continue
        if new != part.texts:
            part.cells = [escape(n) if n != t else cell for n, t, cell in zip(new, part.texts, part.cells)]
            part.texts, part.cut = new, True
        room -= max(_widest(new), len(part.header))
    return parts


def _widths(parts: list[_Part], width: int | None) -> list[int]:
    """Every column at its narrowest, then what room is left to the wrapping texts, up to their whole width."""
    if width is None:
        return [p.whole for p in parts]
    widths = [p.least for p in parts]
    spare = width - frame(widths)
    for n, part in enumerate(parts):
        if part.column.kind == "text" and spare > 0:
            grow = min(spare, part.whole - widths[n])
            widths[n] += grow
            spare -= grow
    return widths


def _layout(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None, level: int | None,
            short: bool) -> Fitted:
    """One candidate layout: the columns at or above `level` give way (None: none does), headers short if asked."""
    parts = [_Part(c, (c.short or c.header) if short else c.header, [row[i] for row in rows],
                   [plain(row[i]) for row in rows]) for i, c in enumerate(columns)]
    giving = [p for p in parts if level is not None and 0 < level <= p.column.gives_way]
    kept = [p for p in parts if p not in giving or p.column.kind in SHRINKS]
    if width is not None:
        kept = _shrink(kept, [p for p in giving if p in kept], width)
    return Fitted(columns=tuple(p.column for p in kept), headers=tuple(p.header for p in kept),
                  rows=tuple(zip(*(p.cells for p in kept))) if kept else (), widths=tuple(_widths(kept, width)),
                  left_out=tuple(p.column.header for p in parts if p not in kept),
                  shortened=tuple(p.column.header for p in kept if p.cut))


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None) -> Fitted:
    """The first layout that fits `width`: all columns; then short headers; then each level of giving way, highest
    first. None fits: the last one, printed wider than the terminal (a name is never cut to make room)."""
    if width is None:
        return _layout(columns, rows, None, None, short=False)
    levels = sorted({c.gives_way for c in columns if c.gives_way > 0}, reverse=True)
    tries = [(None, False), (None, True), *((level, True) for level in levels)]
    for level, short in tries:
        fitted = _layout(columns, rows, width, level, short)
        if fitted.width <= width:
            return fitted
    return fitted


def print_table(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]], *,
                width: int | None, title: str | None = None) -> Fitted:
    """Print the table fitted to `width` (None: whole), and under it a line naming what gave way."""
    fitted = fit(columns, rows, width)
    table = Table(title=title, title_justify="left")
    for column, header, w in zip(fitted.columns, fitted.headers, fitted.widths):
        table.add_column(header, justify="right" if column.kind == "number" else "left", width=w,
                         no_wrap=column.kind != "text", overflow="fold")
    for row in fitted.rows:
        table.add_row(*row)
    saved = console.width
    console.width = max(saved, fitted.width)  # a layout that cannot fit is printed whole, never squeezed
    try:
        console.print(table)
    finally:
        console.width = saved
    if fitted.left_out or fitted.shortened:
        gave = ([f"left out {', '.join(fitted.left_out)}"] if fitted.left_out else []) + \
               ([f"cut {', '.join(fitted.shortened)} (…)"] if fitted.shortened else [])
        console.print(f"[dim]{escape('; '.join(gave))} to fit {width} columns: --wide shows every column[/]",
                      highlight=False)
    return fitted
