"""Results in SQLite (stdlib sqlite3, WAL). Written only by the parent process; never imports torch.

Schema version lives in PRAGMA user_version. Sources (candidates and problems) and build logs are
stored once by hash; each evaluation row belongs to a run and keeps its full EvalResult as JSON.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .types import PROTOCOL_VERSION, EvalResult

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    kind TEXT NOT NULL,            -- 'eval' or 'run'
    target TEXT NOT NULL,
    device_name TEXT NOT NULL,
    model TEXT                     -- the model that wrote the candidates; NULL for files / references
);
CREATE TABLE IF NOT EXISTS sources (
    sha256 TEXT PRIMARY KEY,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS builds (
    build_sha256 TEXT PRIMARY KEY,
    source_sha256 TEXT NOT NULL REFERENCES sources(sha256),
    status TEXT NOT NULL,
    duration_s REAL NOT NULL,
    error TEXT,
    log TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evaluations (
    id INTEGER PRIMARY KEY,
    run TEXT NOT NULL REFERENCES runs(name),
    created_at TEXT NOT NULL,
    problem_id TEXT NOT NULL,
    problem_sha256 TEXT NOT NULL REFERENCES sources(sha256),
    candidate_path TEXT,
    candidate_sha256 TEXT NOT NULL REFERENCES sources(sha256),
    build_sha256 TEXT REFERENCES builds(build_sha256),
    target TEXT NOT NULL,
    device_name TEXT NOT NULL,
    torch_version TEXT NOT NULL,
    protocol_version INTEGER NOT NULL,
    status TEXT NOT NULL,
    speedup REAL,
    runtime_ms REAL,
    ref_runtime_ms REAL,
    error TEXT,
    flags TEXT NOT NULL,           -- JSON list
    result_json TEXT NOT NULL,     -- the EvalResult, build log left out (it is in builds)
    reused_from INTEGER REFERENCES evaluations(id)
);
CREATE INDEX IF NOT EXISTS evaluations_identity
    ON evaluations (candidate_sha256, problem_sha256, device_name, target, protocol_version);
CREATE INDEX IF NOT EXISTS evaluations_run ON evaluations (run);
"""


class StoreError(RuntimeError):
    """The results database cannot be used."""


@dataclass(frozen=True)
class RunInfo:
    name: str
    created_at: str
    kind: str
    target: str
    device_name: str
    model: str | None
    evaluations: int


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Store:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from None
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version} is newer than this harness "
                             f"understands ({SCHEMA_VERSION}); upgrade kernel-harness")
        if version == 0:
            self.db.executescript(f"BEGIN;\n{SCHEMA}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing ----

    def ensure_run(self, name: str, *, kind: str, target: str, device_name: str, model: str | None = None) -> None:
        self.db.execute("INSERT OR IGNORE INTO runs (name, created_at, kind, target, device_name, model) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (name, _now(), kind, target, device_name, model))

    def add(self, run: str, result: EvalResult, *, candidate_source: str, problem_source: str,
            reused_from: int | None = None) -> int:
        """Insert one evaluation (and its sources and build) in a single transaction."""
        stored = result.model_copy(update={"build": result.build.model_copy(update={"log": ""})}) \
            if result.build else result
        with self.db:
            self.db.execute("BEGIN")
            for sha, text in ((result.candidate_sha256, candidate_source), (result.problem_sha256, problem_source)):
                self.db.execute("INSERT OR IGNORE INTO sources (sha256, text) VALUES (?, ?)", (sha, text))
            if result.build:
                b = result.build
                self.db.execute(
                    "INSERT OR IGNORE INTO builds (build_sha256, source_sha256, status, duration_s, error, log, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (b.build_sha256, result.candidate_sha256, b.status, b.duration_s, b.error, b.log, _now()))
            cursor = self.db.execute(
                "INSERT INTO evaluations (run, created_at, problem_id, problem_sha256, candidate_path, "
                "candidate_sha256, build_sha256, target, device_name, torch_version, protocol_version, status, "
                "speedup, runtime_ms, ref_runtime_ms, error, flags, result_json, reused_from) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run, _now(), result.problem_id, result.problem_sha256, result.candidate_path,
                 result.candidate_sha256, result.build.build_sha256 if result.build else None, result.target,
                 result.device_name, result.torch_version, result.protocol_version, result.status, result.speedup,
                 result.runtime_ms, result.ref_runtime_ms, result.error, json.dumps(list(result.flags)),
                 stored.model_dump_json(), reused_from))
            return int(cursor.lastrowid)

    # ---- reading ----

    def find(self, candidate_sha256: str, problem_sha256: str, device_name: str, target: str) -> tuple[int, EvalResult] | None:
        """The latest reusable evaluation of this candidate on this problem and device (timeouts are retried)."""
        row = self.db.execute(
            "SELECT e.id, e.result_json, b.log FROM evaluations e LEFT JOIN builds b USING (build_sha256) "
            "WHERE e.candidate_sha256 = ? AND e.problem_sha256 = ? AND e.device_name = ? AND e.target = ? "
            "AND e.protocol_version = ? AND e.status != 'timeout' ORDER BY e.id DESC LIMIT 1",
            (candidate_sha256, problem_sha256, device_name, target, PROTOCOL_VERSION)).fetchone()
        return (row[0], self._load(row[1], row[2])) if row else None

    @staticmethod
    def _load(result_json: str, log: str | None) -> EvalResult:
        result = EvalResult.model_validate_json(result_json)
        if result.build and log is not None:
            result = result.model_copy(update={"build": result.build.model_copy(update={"log": log})})
        return result

    def runs(self) -> list[RunInfo]:
        rows = self.db.execute(
            "SELECT r.name, r.created_at, r.kind, r.target, r.device_name, r.model, COUNT(e.id) "
            "FROM runs r LEFT JOIN evaluations e ON e.run = r.name GROUP BY r.name ORDER BY r.created_at, r.rowid")
        return [RunInfo(*row) for row in rows]

    def results(self, run: str) -> list[EvalResult]:
        rows = self.db.execute(
            "SELECT e.result_json, b.log FROM evaluations e LEFT JOIN builds b USING (build_sha256) "
            "WHERE e.run = ? ORDER BY e.id", (run,))
        return [self._load(result_json, log) for result_json, log in rows]

    def source(self, sha256: str) -> str | None:
        row = self.db.execute("SELECT text FROM sources WHERE sha256 = ?", (sha256,)).fetchone()
        return row[0] if row else None
