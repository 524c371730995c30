"""Static checks on a candidate's source, before anything is built."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from harness.types import Candidate, Status


class CandidateError(ValueError):
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
    defines = any(
        (isinstance(node, ast.ClassDef) and node.name == "ModelNew")
        or (isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
            isinstance(t, ast.Name) and t.id == "ModelNew"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])))
        or (isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (alias.asname or alias.name) == "ModelNew" for alias in node.names))
        for node in tree.body)
    if not defines:
        return "no_code", "the candidate defines no ModelNew (a class ModelNew(nn.Module) at module level)"
    return None
