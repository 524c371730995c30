"""How a stored row is sealed and checked (seal.py's key over its values): a row the harness did not write, or one
edited since, is never served, and is made again."""

from __future__ import annotations

import hashlib
import logging

from harness import seal

log = logging.getLogger("harness.store")


def seal_row(values) -> str:
    return seal.seal(*map(str, values))


def sealed_row(digest: str | None, values, what: str) -> bool:
    """Whether a stored row is the one the harness wrote (said on stderr where it is not)."""
    if seal.verify(digest, *map(str, values)):
        return True
    log.warning("harness: %s in the store fails its seal check (%s); it is not served, and is made again",
                what, "written before seals, or by another key" if digest is None else "edited since it was written")
    return False


def with_workloads(values, workloads: list[str]) -> list:
    """What an evaluation's seal covers: its row's sealed values, and its workload rows where it has any (a row
    written before them is sealed without)."""
    values = list(values)
    return [*values, hashlib.sha256("\n".join(workloads).encode()).hexdigest()] if workloads else values
