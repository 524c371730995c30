"""How a mismatch that mismatch.py located is said: the records of what its pass found, and at most two lines for
them in a kernel engineer's words (a tail the kernel does not cover, a stride, a block, NaN from row 12 on, a constant
offset). Numbers in the words may be masked for held-out workloads (every number becomes N): they must read without
them."""

from __future__ import annotations

import math
from dataclasses import dataclass

PATTERNS = ("tail", "head", "range", "stride")
CONTIGUOUS = ("tail", "head", "range")


@dataclass(frozen=True)
class Spread:
    """Which indices of one dimension hold wrong elements: `hit` of `size`, the first and the last, and the one
    step between consecutive ones where they are evenly spaced (0 where they are not, or were not checked)."""

    size: int
    hit: int
    first: int
    last: int
    step: int = 0

    @property
    def kind(self) -> str:
        if self.hit == 0:
            return "none"
        if self.hit == self.size:
            return "all"
        if self.last - self.first + 1 == self.hit:
            return "tail" if self.last == self.size - 1 else "head" if self.first == 0 else "range"
        return "stride" if self.step > 1 and self.hit >= 3 else "scattered"


@dataclass(frozen=True)
class Values:
    """Sums over the wrong elements where the output and the expected value are both finite: their count, of
    d = out - expected and d^2, of out and out^2, of expected^2 and of out x expected."""

    count: int
    d: float
    dd: float
    o: float
    oo: float
    tt: float
    ot: float


@dataclass(frozen=True)
class Found:
    """What one pass found, on the host."""

    shape: tuple[int, ...]
    wrong: int
    spreads: list[Spread]
    first: tuple[int, ...]
    nan: int = 0                 # NaN in the output where the expected value is finite
    inf: int = 0                 # and Inf
    nonfinite_spreads: list[Spread] | None = None
    first_nonfinite: tuple[int, ...] | None = None
    values: Values | None = None
    tolerance: float = 1e-3      # relative spread under which the wrong values make one offset, scale or value
    last: tuple[int, ...] = ()   # the last wrong element


@dataclass(frozen=True)
class Axis:
    """How one dimension is named: rows and columns in 2-D, elements in 1-D, indices of dim d otherwise."""

    singular: str
    plural: str
    tag: str = ""    # before a named index: "dim 2 " in "dim 2 indices 4-6"
    of: str = ""     # after a count: " of dim 2" in "5 of 7 indices of dim 2"
    lead: str = ""   # before a sentence about it: "along dim 2 (size 7), "

    def bare(self, a: int, b: int) -> str:
        return f"{self.singular} {a}" if a == b else f"{self.plural} {a}-{b}"

    def span(self, a: int, b: int) -> str:
        return self.tag + self.bare(a, b)


def axes(shape: tuple[int, ...]) -> list[Axis]:
    if len(shape) == 1:
        return [Axis("element", "elements")]
    if len(shape) == 2:
        return [Axis("row", "rows"), Axis("column", "columns")]
    return [Axis("index", "indices", f"dim {d} ", f" of dim {d}", f"along dim {d} (size {n}), ")
            for d, n in enumerate(shape)]


def _index(index: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i) for i in index) + ")"


def describe(found: Found) -> str:
    """At most two lines: NaN and Inf first where there are any, where the wrong elements are, what their values
    have in common."""
    names = axes(found.shape)
    bad = found.nan + found.inf
    lines = [_nonfinite_line(found, names)] if bad else []
    label = _label(found) if bad == found.wrong else "wrong"
    if not bad == found.wrong == 1:
        lines.append(_where(found, names, label))
    values = None if bad else _values_line(found)
    return "\n".join(lines + ([values] if values else []))


def _label(found: Found) -> str:
    return "NaN" if not found.inf else "Inf" if not found.nan else "NaN or Inf"


def _ranked(spreads: list[Spread]) -> list[int]:
    """The telling dimensions first: a pattern before scattered, fewer indices hit before more; a dimension whose
    every index holds wrong elements tells nothing and is left out."""
    told = [d for d, s in enumerate(spreads) if s.kind in PATTERNS or s.kind == "scattered"]
    return sorted(told, key=lambda d: (spreads[d].kind not in PATTERNS, spreads[d].hit / spreads[d].size, d))


def _where(found: Found, names: list[Axis], label: str) -> str:
    """Where the wrong elements are: one pattern, two at once (a block), or scattered."""
    spreads, numel = found.spreads, math.prod(found.shape)
    if found.wrong == 1:
        if len(found.shape) == 1:
            return f"only element {found.first[0]} is {label}; every other element is right"
        return f"only one element is {label}, at {_index(found.first)}; every other element is right"
    if found.wrong == numel:
        return f"every element is {label}"
    if _memory_tail(found):  # a 1-D grid's last partial tile: not whole rows
        span = numel - _flat(found.first, found.shape)
        some = "" if found.wrong == span else f" ({found.wrong} of them; the others match by chance)"
        uncovered = ": a tail the kernel does not cover" if label == "wrong" else ""
        return (f"the last {span} elements in memory order (from {_index(found.first)} on) are {label}{some}; "
                f"every element before them is right{uncovered}")
    patterned = [d for d in _ranked(spreads) if spreads[d].kind in PATTERNS][:2]
    if len(patterned) == 2:
        return _pair(spreads, names, sorted(patterned), label)
    if patterned:
        return _single(spreads[patterned[0]], names[patterned[0]], label)
    return _scattered(found, names, label)


def _memory_tail(found: Found) -> bool:
    """The wrong elements fill, at least half of them, a stretch that ends at the output's end (within a tenth of
    it), starts inside a row and is less than half the output."""
    numel = math.prod(found.shape)
    span = numel - _flat(found.first, found.shape)
    return (len(found.shape) > 1 and any(found.first[1:]) and 2 * span < numel and 2 * found.wrong >= span
            and bool(found.last) and _flat(found.last, found.shape) >= numel - 1 - span // 10)


def _flat(index: tuple[int, ...], shape: tuple[int, ...]) -> int:
    flat = 0
    for i, n in zip(index, shape):
        flat = flat * n + i
    return flat


def _single(s: Spread, ax: Axis, label: str) -> str:
    """One dimension's pattern as a sentence."""
    many = s.hit > 1
    them, are = ("them", "are") if many else ("it", "is")
    if s.kind == "tail":
        what = f"the last {s.hit} {ax.plural}" if many else f"the last {ax.singular}"
        return (f"{ax.lead}{what} ({ax.bare(s.first, s.last)}) {are} {label}; {ax.plural} before {them} are right"
                + (": a tail the kernel does not cover" if label == "wrong" else ""))
    if s.kind == "head":
        what = f"the first {s.hit} {ax.plural}" if many else f"the first {ax.singular}"
        return (f"{ax.lead}{what} ({ax.bare(s.first, s.last)}) {are} {label}; {ax.plural} after {them} are right: "
                "a wrong head")
    if s.kind == "range":
        if not many:
            return f"{ax.lead}only {ax.singular} {s.first} is {label}; every other {ax.singular} is right"
        return (f"{ax.lead}{ax.bare(s.first, s.last)} ({s.hit} of {s.size}) are {label}; {ax.plural} before and "
                "after them are right")
    return (f"{ax.lead}one {ax.singular} in every {s.step} is {label} ({_progression(s, ax.plural)}); the "
            f"{ax.plural} between are right: a stride pattern")


def _progression(s: Spread, plural: str) -> str:
    middle = ", ..." if s.hit > 3 else ""
    return f"{plural} {s.first}, {s.first + s.step}{middle}, {s.last}"


def _part(s: Spread, ax: Axis, brief: bool = False) -> str:
    if s.kind == "stride":
        listed = "" if brief else f" ({ax.tag}{_progression(s, ax.plural)})"
        return f"one {ax.tag}{ax.singular} in every {s.step}{listed}"
    return ax.span(s.first, s.last)


def _pair(spreads: list[Spread], names: list[Axis], dims: list[int], label: str) -> str:
    """Two dimensions with a pattern each: a block where both are ranges."""
    (a, b), (sa, sb) = dims, (spreads[dims[0]], spreads[dims[1]])
    if sa.kind in CONTIGUOUS and sb.kind in CONTIGUOUS:
        return (f"a block is {label}: {names[a].span(sa.first, sa.last)}, {names[b].span(sb.first, sb.last)} "
                f"({sa.hit} x {sb.hit}); everything outside it is right")
    return (f"the {label} elements lie only in {_part(sa, names[a])} and {_part(sb, names[b])}; "
            "everything else is right")


def _scattered(found: Found, names: list[Axis], label: str) -> str:
    """No pattern: in how many of which dimension's indices, and the first."""
    first = f"the first at {_index(found.first)}"
    if len(found.shape) == 1:
        return f"scattered: {found.wrong} of {found.shape[0]} elements are {label}, no pattern; {first}"
    spreads = found.spreads
    dims = sorted(sorted(range(len(spreads)), key=lambda d: (spreads[d].hit / spreads[d].size, d))[:2])
    if all(spreads[d].kind == "all" for d in dims):
        where = "every index of every dim" if len(dims) < len(spreads) else \
            " and ".join(f"every {names[d].singular}{names[d].of}" for d in dims)
        return f"{label} elements all over, in {where}; {first}"
    parts = " and ".join(f"every {names[d].singular}{names[d].of}" if spreads[d].kind == "all"
                         else f"{spreads[d].hit} of {spreads[d].size} {names[d].plural}{names[d].of}" for d in dims)
    return f"scattered: {label} elements in {parts}, no pattern; {first}"


def _nonfinite_line(found: Found, names: list[Axis]) -> str:
    """How many NaN and Inf where the expected value is finite, the first, and their pattern if they have one."""
    bad = found.nan + found.inf
    counts = " and ".join(f"{n} {what}" for n, what in ((found.nan, "NaN"), (found.inf, "Inf")) if n)
    at = "at" if bad == 1 else "the first at"
    line = f"{counts} where the expected value is finite, {at} {_index(found.first_nonfinite or ())}"
    short = _short(found, names) if bad > 1 else None
    return f"{line}: {_label(found)} {short}" if short else line


def _short(found: Found, names: list[Axis]) -> str | None:
    """The non-finite elements' pattern in a few words ("from row 12 on"), or None."""
    spreads = found.nonfinite_spreads or []
    if found.nan + found.inf == math.prod(found.shape):
        return "everywhere"
    patterned = [d for d in _ranked(spreads) if spreads[d].kind in PATTERNS][:2]
    if len(patterned) == 2:
        return "in " + ", ".join(_part(spreads[d], names[d], brief=True) for d in sorted(patterned))
    if not patterned:
        return None
    s, ax = spreads[patterned[0]], names[patterned[0]]
    if s.kind == "tail":
        return f"from {ax.tag}{ax.singular} {s.first} on"
    if s.kind == "head":
        return f"up to {ax.tag}{ax.singular} {s.last}"
    if s.kind == "range":
        return f"in {ax.span(s.first, s.last)}"
    return f"in one {ax.tag}{ax.singular} in every {s.step}"


def _spread(squares: float, total: float, count: int) -> float:
    return math.sqrt(max(squares / count - (total / count) ** 2, 0.0))


def _values_line(found: Found) -> str | None:
    """What the wrong values have in common: zero, a constant offset, a scale, one value; None if nothing."""
    v, tol = found.values, found.tolerance
    if v is None or v.count == 0 or v.count != found.wrong:
        return None
    if v.count == 1:
        return f"it holds {v.o:.4g} where {v.o - v.d:.4g} is expected"
    if v.oo == 0:
        return "every wrong element is zero (left unwritten?)"
    offset = v.d / v.count
    if offset and _spread(v.dd, v.d, v.count) <= tol * abs(offset):
        return f"every wrong element is off by {offset:+.4g}: a constant offset"
    scale = v.ot / v.tt if v.tt > 0 else 0.0
    if scale and max(v.oo - v.ot * scale, 0.0) <= tol * tol * v.oo:
        if abs(scale + 1) <= tol:
            return "every wrong element has the wrong sign (scaled by -1)"
        return f"every wrong element is scaled by {scale:.4g}: a wrong scale factor"
    value = v.o / v.count
    if _spread(v.oo, v.o, v.count) <= tol * abs(value):
        return f"every wrong element holds the same value {value:.4g}"
    return None
