"""Static checks on a candidate's source, before anything is built."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from harness.errors import InputError
from harness.eval import source_graph
from harness.types import Candidate, Status


class CandidateError(InputError, ValueError):
    """A candidate file that cannot be read."""


def load_candidate(path: str) -> Candidate:
    try:
        source = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CandidateError(f"{path}: cannot read candidate file ({getattr(exc, 'strerror', None) or exc})") from None
    return candidate_from_source(source, path)


def candidate_from_source(source: str, path: str | None = None) -> Candidate:
    return Candidate(path=path, source=source, sha256=hashlib.sha256(source.encode()).hexdigest())


def precheck(source: str) -> tuple[Status, str] | None:
    """A verdict that needs no build: the source does not parse, or defines no ModelNew."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return "compile_error", f"SyntaxError at line {exc.lineno}: {exc.msg}"
    defines = source_graph.entry(tree) is not None
    if not defines:
        return "no_code", "the candidate defines no ModelNew (a class ModelNew(nn.Module) at module level)"
    return None
