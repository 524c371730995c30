"""The machine's own measurements, kept per user beside the precompiled headers: the device's peaks and each
problem's baselines belong to the machine, not to a results directory, so a new results directory (a second
experiment, a test) does not measure them again, and a baseline one directory measured can be confirmed by another.

It is a results store of its own (store.py: the same tables, rows sealed with the same per-user key) holding only
peaks and baselines; each results store keeps its own copy of what it uses, which is what reports read. Children
never write it: the sandbox leaves them nothing writable but their scratch directory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.store import Store, StoreError

logger = logging.getLogger(__name__)

MEASUREMENTS_ENV = "HARNESS_MEASUREMENTS"  # the file; "off": none (every results directory measures its own)


def measurements_path() -> Path | None:
    if os.environ.get(MEASUREMENTS_ENV):
        return None if os.environ[MEASUREMENTS_ENV] == "off" else Path(os.environ[MEASUREMENTS_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kernel-harness" / "measurements.db"


@contextmanager
def machine_store() -> Iterator[Store | None]:
    """The machine's store, or None where there is none (switched off, or a home that cannot hold it: then each
    results directory measures for itself, as it would without this cache)."""
    path = measurements_path()
    try:
        store = Store(path) if path is not None else None
    except StoreError as exc:
        if os.environ.get(MEASUREMENTS_ENV):  # asked for by name: say why it is not used
            logger.warning("harness: %s=%s cannot be used (%s): each results directory measures its own peaks "
                           "and baselines; set it to a file that can be created, or to off", MEASUREMENTS_ENV,
                           os.environ[MEASUREMENTS_ENV], exc)
        store = None
    try:
        yield store
    finally:
        if store is not None:
            store.close()
