"""One vocabulary for the numbers every terminal table and summary prints: a share is `8%`, a speedup `2.41x`,
a speedup that was measured but is not counted (its result is flagged) `(0.47x)` as in the HTML report, a time
in ms or s to 3 significant digits (a median of scheduler-sliced samples reads 12.0 ms, not 11.997), and `-`
for nothing measured."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from harness.flags import CONTENDED, EXCLUDING

NOTHING = "-"
LEGEND = "(0.47x): measured but not counted (flagged)"
# why a flag that is common on an ordinary machine was raised, said where the flagged results are counted
FLAG_HINTS = {CONTENDED: "other work on the cores or the GPU; `harness doctor` says why"}


def pct(share: float | None) -> str:
    """A share 0-1 as a whole percent: `8%`."""
    return NOTHING if share is None else f"{share:.0%}"


def times(x: float | None) -> str:
    """A speedup: `2.41x`."""
    return NOTHING if x is None else f"{x:.2f}x"


def not_counted(x: float | None) -> str:
    """A flagged result's measured speedup: `(0.47x)`, the LEGEND's notation."""
    return NOTHING if x is None else f"({times(x)})"


def significant(x: float) -> str:
    """3 significant digits, never an exponent: 11.997 -> 12.0, 0.01664 -> 0.0166, 1234.5 -> 1,235."""
    text = f"{x:#.3g}"
    return f"{x:,.0f}" if "e" in text else text.rstrip(".")


def ms(x: float | None) -> str:
    """A time in milliseconds, the unit in the column's header: `12.0`."""
    return NOTHING if x is None else significant(x)


def seconds(x: float | None) -> str:
    return NOTHING if x is None else f"{significant(x)} s"


def flagged_line(flag_sets: Iterable[tuple[str, ...]], correct: int) -> str:
    """How many correct results are not counted, and by which flags: `3 of 3 correct results flagged, not counted:
    contended 3 (other work on the cores or the GPU; ...)`."""
    flag_sets = list(flag_sets)
    why = Counter(flag for flags in flag_sets for flag in flags if flag in EXCLUDING)
    reasons = ", ".join(f"{flag} {n}" + (f" ({FLAG_HINTS[flag]})" if flag in FLAG_HINTS else "")
                        for flag, n in why.most_common())
    return f"{len(flag_sets)} of {correct} correct results flagged, not counted" + (f": {reasons}" if reasons else "")
