"""Tables in a terminal that never cut what a reader types again: names (runs, problems, candidates, models)
and numbers keep their whole width, free text wraps at words, and a table whose narrowest form is wider than
the terminal is printed at that width (the terminal wraps its lines) instead of squeezed into ellipses."""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

WIDE = 10_000


def name_column(table: Table, header: str, **kwargs) -> None:
    """A column of names: never wrapped at a word or cut; folded only if nothing else can give way."""
    table.add_column(header, no_wrap=True, overflow="fold", **kwargs)


def number_column(table: Table, header: str) -> None:
    table.add_column(header, justify="right", no_wrap=True)


def print_table(console: Console, table: Table) -> None:
    for column in table.columns:  # a header is not measured as a cell: keep it whole too
        if isinstance(column.header, str) and column.min_width is None:
            column.min_width = len(column.header)
    # the measured minimum counts the cells (with their padding), not the rules between them
    narrowest = Measurement.get(console, console.options.update_width(WIDE), table).minimum + len(table.columns) + 1
    if narrowest <= console.width:
        console.print(table)
        return
    width = console.width
    console.width = narrowest
    try:
        console.print(table)
    finally:
        console.width = width
