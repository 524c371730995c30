"""How a candidate's source is shown: which of its lines are the kernel, what changed since the last turn, and
the end of its compiler log. Read from the syntax tree (never imported, never run)."""

from __future__ import annotations

import ast
import difflib
import re

# C++ or CUDA inside a Python string: what load_inline's sources hold and a docstring does not
CPP_MARKS = re.compile(r"#include|__global__|__device__|<<<|PYBIND11_MODULE|torch::|at::Tensor|extern \"C\"|"
                       r"\b(?:void|float|int|auto)\s+\w+\s*\(")
CUDA_MARKS = re.compile(r"__global__|__device__|<<<|blockIdx|threadIdx")
TRITON_DECORATORS = {"jit", "autotune", "heuristics"}
LOG_TAIL_LINES = 80
LOG_TAIL_CHARS = 12_000


def kernel_spans(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, kind) of each kernel in the source, 1-based and inclusive, in order: the C++ and
    CUDA strings it builds (kind cuda or c++) and its Triton functions (triton). [] when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and CPP_MARKS.search(node.value):
            spans.append((node.lineno, node.end_lineno or node.lineno,
                          "cuda" if CUDA_MARKS.search(node.value) else "c++"))
        elif isinstance(node, ast.FunctionDef) and any(_decorator_name(d) in TRITON_DECORATORS
                                                       for d in node.decorator_list):
            spans.append((min(d.lineno for d in node.decorator_list), node.end_lineno or node.lineno, "triton"))
    return _merged(sorted(spans))


def _decorator_name(node: ast.expr) -> str | None:
    """`triton.jit`, `jit`, `triton.autotune(...)`: the last name of what is called or named."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans inside an earlier one (an f-string's parts, a string in a Triton function) are dropped."""
    kept: list[tuple[int, int, str]] = []
    for span in spans:
        if kept and span[0] <= kept[-1][1]:
            if span[1] > kept[-1][1]:
                kept[-1] = (kept[-1][0], span[1], kept[-1][2])
            continue
        kept.append(span)
    return kept


def source_diff(before: str, after: str, *, before_name: str, after_name: str) -> str:
    """A unified diff, three lines of context ('' when the sources are the same)."""
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name,
                                          lineterm=""))


def log_tail(log: str | None) -> str:
    """The end of a build log, where the compiler's verdict is: its last lines, at most LOG_TAIL_CHARS."""
    if not log:
        return ""
    tail = "\n".join(log.rstrip().splitlines()[-LOG_TAIL_LINES:])
    return tail[-LOG_TAIL_CHARS:]
