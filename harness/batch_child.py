"""A list of items worked through by one long-lived child (`python -m harness.child JOB SPEC`), for the quality
gate and the baselines: the parent's driver (run_each), which blames the item a crash or a hang was on and starts a
new child on the rest, and the child's side of it (append_line)."""

from __future__ import annotations

import itertools
import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.process import CHILD, kill_session, spawn, track


def run_each(ids: list[str], *, job: str, write_spec: Callable[[list[str], Path, Path], None],
             env: dict[str, str], log_dir: Path, log_name: str, timeout_s: float, timeout_hint: str,
             on_result: Callable[[str, dict, float], None]) -> None:
    """Work through `ids` in one long-lived child (`python -m harness.child JOB SPEC`); after a crash or a hang, blame
    the id it was on and start a new child on the rest.

    `write_spec(remaining, spec_path, results_path)` writes the child's spec; the child appends JSON lines
    to results_path: {"start": id} before each item, then {"id": id, ...} with what it found.
    `on_result(id, record, seconds)` gets every record, or {"error": why} for an item that killed its child.
    `timeout_s` is per item, including the child's start for the first.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    remaining = list(ids)
    with tempfile.TemporaryDirectory(prefix=f"harness-{log_name}-") as tmp:
        for attempt in itertools.count(1):
            if not remaining:
                return
            work = Path(tmp) / str(attempt)
            work.mkdir()
            spec, results = work / "spec.json", work / "results.jsonl"
            results.touch()
            write_spec(remaining, spec, results)
            log_path = log_dir / f"{log_name}-{attempt}.log"
            done, stuck, failure = _one_child([*CHILD, job, str(spec)], results, env, log_path,
                                              timeout_s, timeout_hint, on_result)
            if stuck is not None:
                on_result(stuck, {"error": failure}, timeout_s if failure.startswith("timed out") else 0.0)
                done.add(stuck)
            elif not done:  # it died before its first item: nothing will work in this environment
                for item in remaining:
                    on_result(item, {"error": f"the child process failed to start; see {log_path}"}, 0.0)
                return
            remaining = [i for i in remaining if i not in done]


def _one_child(argv: list[str], results: Path, env: dict[str, str], log_path: Path, timeout_s: float,
               timeout_hint: str, on_result) -> tuple[set[str], str | None, str]:
    """Run one child until it finishes, dies or hangs: (ids done, the id it was on, why)."""
    done: set[str] = set()
    current, started, buffer = None, time.monotonic(), ""
    with open(log_path, "wb") as log:
        proc = spawn(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        with track(proc), results.open() as reader:
            while True:
                exited = proc.poll() is not None  # polled before reading: every line written before exit is seen
                buffer += reader.read()
                *lines, buffer = buffer.split("\n")
                for record in map(json.loads, filter(None, lines)):
                    if "start" in record:
                        current, started = record["start"], time.monotonic()
                    else:
                        done.add(record["id"])
                        on_result(record["id"], record, time.monotonic() - started)
                        current = None
                if exited:
                    return done, current, f"the child process died on this one (exit {proc.returncode}); " \
                                          f"see {log_path}"
                if current is not None and time.monotonic() - started > timeout_s:
                    kill_session(proc.pid)
                    return done, current, f"timed out after {timeout_s:g} s ({timeout_hint})"
                time.sleep(0.05)


def append_line(path: Path, record: dict) -> None:
    """One JSON line for run_each's reader (the child side)."""
    with path.open("a") as f:
        f.write(json.dumps(record, default=str) + "\n")
