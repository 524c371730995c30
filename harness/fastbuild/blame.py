"""Whose is a build that failed with the precompiled header: the answer's, or perhaps the header's.

A build with our PCH that fails is built again without it (hooks.py), so that its verdict is plain torch's. That
second compile is needed only where the PCH can be the cause. A PCH is made from the exact command main.cpp compiles
with (pch.py), so where GCC reads it the translation unit means what it means without it, and an error at a line the
answer wrote (any line of main.cpp or cuda.cu but torch's implicit includes and an include of torch/extension.h,
the header the PCH stands for) is one plain torch gives too. Anything else may be the header's: an error in
another file (a torch header, the PCH's directory), at the include the PCH serves, one that names a precompiled
header, an internal compiler error, a compiler that died, or output with no error we can place.
Stdlib only, as compiler_lines.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.compiler_lines import torch_head

ANSWERS_FILES = ("main.cpp", "cuda.cu")  # what load_inline writes of the answer's strings
# A compiler's error as GCC (`path:LINE:COL: error: ...`, `cc1plus: fatal error: ...`, `path:LINE: fatal error: ...`)
# or nvcc (`path(LINE): error: ...`, `path(LINE): catastrophic error: ...`) writes it
_ERROR = re.compile(r"^(?P<where>[^:\n]+?)(?::(?P<line>\d+)(?::\d+)?|\((?P<nv_line>\d+)\))?"
                    r"(?: \(answer line \d+\))?: (?P<kind>(?:fatal |catastrophic )?error|internal compiler error)\b")
_THE_HEADERS = re.compile(r"precompiled header|\bPCH\b|\.gch\b|internal compiler error", re.IGNORECASE)
_INCLUDES_EXTENSION_H = re.compile(r"\s*#\s*include\s*[<\"]torch/extension\.h[>\"]")


def the_answers(output: str | None, build_dir: Path) -> bool:
    """Whether every error in `output` (what the build printed; None where not all of it was read) is at a line of
    the answer's in a source torch generated in `build_dir`, so that the build without the PCH would fail the same."""
    if output is None:
        return False
    errors = [match for line in output.splitlines() if (match := _ERROR.match(line.strip()))]
    if not errors:
        return False  # a failure we cannot place
    lines: dict[str, list[str] | None] = {}
    return all(_at_an_answers_line(error, build_dir, lines) for error in errors)


def _at_an_answers_line(error: re.Match, build_dir: Path, read: dict[str, list[str] | None]) -> bool:
    if error.group("kind") == "internal compiler error" or _THE_HEADERS.search(error.string):
        return False
    number = error.group("line") or error.group("nv_line")
    where = Path(error.group("where"))
    if number is None or where.name not in ANSWERS_FILES or (build_dir / where).parent.resolve() != build_dir.resolve():
        return False
    if where.name not in read:
        try:
            read[where.name] = (build_dir / where.name).read_text(errors="replace").splitlines()
        except OSError:
            read[where.name] = None
    lines = read[where.name]
    index = int(number) - 1
    if lines is None or not torch_head(where.name, lines) <= index < len(lines):
        return False
    return _INCLUDES_EXTENSION_H.match(lines[index]) is None
