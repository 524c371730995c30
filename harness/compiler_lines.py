"""Compiler diagnostics in the candidate's own line numbers.

torch's load_inline writes the source strings of an answer into generated files (`ext0_x/main.cpp`: its include,
the strings joined, the bindings; `ext0_x/cuda.cu`: three includes and the strings), so the compiler says
`main.cpp:12:5: error: ...`, a line the model that wrote the answer cannot find. Each such diagnostic is given the
answer's line too (`main.cpp:12:5 (answer line 40): error: ...`), found by aligning the generated file's lines with
the answer's (runs of equal lines, whitespace at their ends aside). Only text is added: the diagnostic stays as the
compiler wrote it, for whatever reads it after.
Stdlib only: the parent (eval/build.py, on the build log) and the child (child/loader.py, on an exception) use it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = frozenset({".cpp", ".cu", ".cuh", ".h"})
READ_LIMIT = 4 << 20  # what is read of the generated sources in all: they are the answer's strings, and small
FILE_LIMIT = 256  # and of how many files (the candidate made these directories)
# A line written more often than this in the answer never starts a run of matching lines, only continues one: the
# alignment's time grows with the places each line is found
POPULAR = 20

_EXT_DIR = re.compile(r"ext\d+_\w*")
_KEY = r"(?P<key>ext\d+_\w*/[\w.+-]+)(?![\w.+-])"  # `ext<i>_<name>/<file>`, a path's end (child/loader.py)
_MARK = " (answer line {})"
_NOT_MARKED = r"(?!:?\d)(?! \(answer line)"  # the whole location, and not marked before
# g++/clang `path:LINE:COL: ...`, `path:LINE: ...` (also `In file included from path:LINE,`); nvcc `path(LINE): ...`
_LOCATION = re.compile(r"(?:(?<=[\s/'\"`(])|^)" + _KEY + r"(?::(?P<line>\d+)(?::\d+)?|\((?P<nv_line>\d+)\))"
                       + _NOT_MARKED)
# nvcc's `detected during instantiation of "..." at line 12 [of path]`: without a path, in the file of the error
_AT_LINE = re.compile(r"\bat line (?P<line>\d+)(?: of (?:\S*/)?" + _KEY + ")?" + _NOT_MARKED)
_NVCC_PRIMARY = re.compile(r"\S+\(\d+\): ")  # an nvcc diagnostic's own line: what `at line N` after it is in

_TORCH_BINDING = re.compile(r'm\.def\("(\w+)", (?:torch::wrap_pybind_function\(\1\)|\1), ".*"\);')
_TORCH_HEADS = {"main.cpp": ("#include <torch/extension.h>",),
                "cuda.cu": ("#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>")}


def generated_sources(root: Path) -> dict[str, str]:
    """The sources torch generated under `root` (each `ext<i>_<name>/` directory's), keyed by their path relative
    to it; at most READ_LIMIT characters in all. Links are not followed: the candidate made these directories."""
    found: dict[str, str] = {}
    budget = READ_LIMIT
    for path in _source_files(root):
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(budget)
        budget -= len(text)
        found[path.relative_to(root).as_posix()] = text
        if budget <= 0 or len(found) >= FILE_LIMIT:
            break
    return found


def _source_files(root: Path) -> Iterator[Path]:
    for directory in sorted(root.iterdir()):
        if _EXT_DIR.fullmatch(directory.name) and not directory.is_symlink() and directory.is_dir():
            yield from (path for path in sorted(directory.iterdir())
                        if path.suffix in SUFFIXES and not path.is_symlink() and path.is_file())


def _key(line: str) -> str:
    """What two lines are compared by: no whitespace at the ends, an f-string's doubled braces and a plain string's
    doubled backslashes as they are written out."""
    return line.strip().replace("{{", "{").replace("}}", "}").replace("\\\\", "\\")


def _answer_key(line: str, known: set[str]) -> str:
    """A line of the answer's Python, as a line of a source string it holds where the whole line is none of the
    generated file's: `CPP = """#include <x>` (a string opened), `}"""` (closed), `decl = "int f();"` (one line)."""
    key = _key(line)
    if key in known or ('"' not in key and "'" not in key):
        return key
    for quote in ('"""', "'''", '"', "'"):
        parts = key.split(quote)
        for part in (parts[-1], parts[0], *parts[1:-1:2]) if len(parts) > 1 else ():
            for candidate in (part.strip(), part.removesuffix("\\n").strip()):
                if candidate in known:
                    return candidate
    return key


def _trivial(key: str) -> bool:
    """A line with nothing to tell it by (`}`, `{`, `*/`, blank): matched only inside a block of real lines."""
    return not any(ch.isalnum() for ch in key)


def torch_head(name: str, lines: list[str]) -> int:
    """How many lines at the head of generated file `name` are torch's implicit includes (none without them)."""
    heads = _TORCH_HEADS.get(name, ())
    return len(heads) if tuple(lines[:len(heads)]) == heads else 0


def torch_lines(name: str, lines: list[str]) -> set[int]:
    """The indices of the lines torch wrote itself: its includes at the head, the bindings at the end of main.cpp."""
    ours = set(range(torch_head(name, lines)))
    if name == "main.cpp" and lines and lines[-1] == "}":
        start = len(lines) - 2
        while start >= 0 and _TORCH_BINDING.fullmatch(lines[start]):
            start -= 1
        if start >= 0 and lines[start] == "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {":
            ours.update(range(start, len(lines)))
    return ours


@dataclass
class _Run:
    """Lines that are the same on both sides, one after the other: generated gen.. and answer ans.."""
    gen: int  # first index in the generated file
    ans: int  # first index in the answer
    size: int
    anchors: list[str]  # its lines that may start a run (not trivial, not popular)

    @property
    def offset(self) -> int:
        return self.gen - self.ans


def line_map(name: str, generated: str, answer: str) -> dict[int, int]:
    """Generated line (1-based) -> answer line (1-based), for the lines of `generated` written in `answer`: those
    in a run of two real lines or more that match in order, or of one real line found once on each side or at the
    offset of the run taken before or after it (an f-string's lines between). Torch's own lines map to nothing,
    a trivial or a popular line only inside a run of real ones. The strings may be joined in any order."""
    gen_lines = generated.splitlines()
    gen = [_key(line) for line in gen_lines]
    for index in torch_lines(name, gen_lines):
        gen[index] = f"\0torch line {index}"  # matches nothing in the answer
    known = set(gen)
    ans = [_answer_key(line, known) for line in answer.splitlines()]
    counts = Counter(ans)
    runs = _runs(gen, ans, lambda key: not _trivial(key) and counts[key] <= POPULAR)
    # generated index -> (anchors, size, -answer index) of the run that says most of it, the answer's first if two
    best: dict[int, tuple[int, int, int]] = {}
    for run in _kept(runs, Counter(gen), counts):
        for k in range(run.size):
            best[run.gen + k] = max(best.get(run.gen + k, (-1, 0, 0)), (len(run.anchors), run.size, -run.ans - k))
    return {index + 1: 1 - found[2] for index, found in sorted(best.items())}


def _runs(gen: list[str], ans: list[str], anchor: Callable[[str], bool]) -> list[_Run]:
    """Every longest run of equal lines that holds an anchor, in the order of the generated file. Each pair of lines
    is compared once per offset: a line written at most POPULAR times starts at most as many runs."""
    where: dict[str, list[int]] = {}
    for j, key in enumerate(ans):
        if anchor(key):
            where.setdefault(key, []).append(j)
    reach: dict[int, int] = {}  # offset -> where the last run found along it ends in the generated file
    runs = []
    for i, key in enumerate(gen):
        for j in where.get(key, ()):
            if i < reach.get(i - j, 0):
                continue  # inside a run found before
            first = 0
            while i - first > 0 and j - first > 0 and gen[i - first - 1] == ans[j - first - 1]:
                first += 1
            size = first + 1
            while i + size - first < len(gen) and j + size - first < len(ans) \
                    and gen[i + size - first] == ans[j + size - first]:
                size += 1
            reach[i - j] = i - first + size
            runs.append(_Run(i - first, j - first, size, [k for k in gen[i - first:i - first + size] if anchor(k)]))
    return sorted(runs, key=lambda run: (run.gen, run.ans))


def _kept(runs: list[_Run], gen_counts: Counter, ans_counts: Counter) -> list[_Run]:
    """The runs taken: see line_map. One of a single real line at the offset of the run taken before it (in the
    generated file) or after it is taken too, left to right and back (lines broken by an f-string's fields)."""
    kept = [len(r.anchors) >= 2 or (len(r.anchors) == 1 and gen_counts[r.anchors[0]] == 1 == ans_counts[r.anchors[0]])
            for r in runs]
    for order in (range(len(runs)), range(len(runs) - 1, -1, -1)):
        beside: _Run | None = None
        for i in order:
            kept[i] = kept[i] or (beside is not None and beside.offset == runs[i].offset)
            beside = runs[i] if kept[i] else beside
    return [run for run, taken in zip(runs, kept) if taken]


@dataclass
class _Mapper:
    """The maps of one log's generated files, each made once and only when a diagnostic names it."""
    generated: dict[str, str]
    answer: str
    maps: dict[str, dict[int, int]] = field(default_factory=dict)

    def __post_init__(self):
        self.by_key = {"/".join(Path(path).parts[-2:]): path for path in self.generated}

    def answer_line(self, key: str, line: int) -> int | None:
        path = self.by_key.get(key)
        if path is None:
            return None
        if path not in self.maps:
            self.maps[path] = line_map(Path(path).name, self.generated[path], self.answer)
        return self.maps[path].get(line)


def in_candidate_terms(log: str, generated: dict[str, str], answer: str) -> str:
    """`log` with each diagnostic that names a generated file and a line of it written in `answer` given that
    line of the answer too: `.../ext0_x/main.cpp:12:5 (answer line 40): error: ...`. Every other line as it was."""
    if not generated or "ext" not in log:
        return log
    mapper = _Mapper(generated, answer)
    lines = log.split("\n")
    last: str | None = None  # the generated file of the last nvcc diagnostic, or None
    for i, line in enumerate(lines):
        if primary := _NVCC_PRIMARY.match(line):
            named = _LOCATION.search(primary.group(0))
            last = named.group("key") if named else None
        if "ext" in line or (last and "at line" in line):
            lines[i] = _mark_line(line, mapper, last)
    return "\n".join(lines)


def _mark_line(line: str, mapper: _Mapper, last: str | None) -> str:
    """One line of the log, each location in a generated file marked with the answer's line."""

    def mark(match: re.Match) -> str:
        key = match.group("key")
        if key is None and match.string.startswith(" of ", match.end()):
            return match.group(0)  # nvcc's `at line N of` a file of no answer's
        number = match.groupdict().get("nv_line") or match.group("line")
        found = mapper.answer_line(key or last or "", int(number))
        return match.group(0) if found is None else match.group(0) + _MARK.format(found)

    line = _LOCATION.sub(mark, line)
    return _AT_LINE.sub(mark, line) if "at line" in line else line
