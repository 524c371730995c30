"""Results in SQLite (stdlib sqlite3, WAL). Written only by the parent process; never imports torch.

Schema version lives in PRAGMA user_version. Sources (candidates and problems) and build logs are
stored once by hash; each evaluation row belongs to a run and keeps its full EvalResult as JSON.
`completions` is the response cache (and the record of every prompt and answer); `turns` ties a run's
conversations together: which completion, which candidate, which evaluation, at each turn.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from harness.checks import TRUTH, CheckSpec
from harness.completions import Completion, CompletionRequest
from harness.errors import InputError
from harness.store_records import RunInfo, RunUsage, TurnKey, TurnRecord
from harness.store_schema import SCHEMA_VERSION, upgrade_script
from harness.store_seals import seal_row, sealed_row, with_workloads
from harness.types import (
    PROTOCOL_VERSION,
    Baseline,
    Candidate,
    EvalResult,
    Peaks,
)
from harness.workloads import WorkloadResult

# (problem_sha256, device_name, target, torch_version, dtype, protocol_version, kind)
BaselineKey = tuple[str, str, str, str, str, int, str]
# What an evaluation's seal covers: the columns find() selects on, and the result it serves.
SEALED_EVALUATION = ("candidate_sha256", "problem_sha256", "device_name", "target", "protocol_version", "status",
                     "flags", "result_json")

class StoreError(InputError, RuntimeError):
    """The results database cannot be used."""


RESULTS_DIR_FIX = "pass --results-dir (or --db) a directory you can write"


def prepare_results_dir(path: Path) -> None:
    """Make `path` (and its parents) if missing and write a file in it, the one check of a results directory:
    `eval`, `run` and every command that stores run it through Store, and `doctor` runs it alone. Trying is the
    test: a path under a file, under /proc, or read-only fails here, with why, where root's permission bits
    would say yes."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        verb = "write in" if path.is_dir() else "create"
        raise StoreError(f"cannot {verb} the results directory {path}: {exc.strerror}; {RESULTS_DIR_FIX}") from None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Store:
    def __init__(self, path: Path):
        self.path = Path(path)
        prepare_results_dir(self.path.parent)
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._upgrade()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from None

    def _upgrade(self) -> None:
        """Create or migrate the schema, under a write lock so concurrent openers do it once."""
        if self.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: schema version {version} is newer than this harness "
                                 f"understands ({SCHEMA_VERSION}); upgrade kernel-harness")
            script = upgrade_script(version)
            for statement in filter(str.strip, script.split(";")):
                self.db.execute(statement)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing ----

    def ensure_run(self, name: str, *, kind: str, target: str, device_name: str, model: str | None = None,
                   config: str | None = None) -> bool:
        """Create the run, or update its config (a resumed run may add problems, samples or turns); True if it
        is new. A run given a config (run, generate) is going again: unfinished until finish_run."""
        with self.db:
            self.db.execute("BEGIN")
            created = self.db.execute(
                "INSERT OR IGNORE INTO runs (name, created_at, kind, target, device_name, model, config) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (name, _now(), kind, target, device_name, model, config)).rowcount
            if config is not None:
                self.db.execute("UPDATE runs SET config = ?, finished_at = NULL WHERE name = ?", (config, name))
        return bool(created)

    def finish_run(self, name: str) -> None:
        """The run went through every turn: a resume without a name passes it by."""
        self.db.execute("UPDATE runs SET finished_at = ? WHERE name = ?", (_now(), name))

    def add_completion(self, request: CompletionRequest, completion: Completion) -> None:
        """Record a paid answer (it also serves as the response cache)."""
        self.db.execute("INSERT OR REPLACE INTO completions (key, model, request_json, completion_json, created_at) "
                        "VALUES (?, ?, ?, ?, ?)", (request.key, request.model, request.model_dump_json(),
                                                   completion.model_dump_json(), _now()))

    def add_turn(self, key: TurnKey, *, completion_key: str, cached: bool, candidate: Candidate | None,
                 reason: str | None) -> None:
        """A turn's answer: its completion, and the candidate it gave (None: `reason` says why none)."""
        with self.db:
            self.db.execute("BEGIN")
            if candidate is not None:
                self.db.execute("INSERT OR IGNORE INTO sources (sha256, text) VALUES (?, ?)",
                                (candidate.sha256, candidate.source))
            self.db.execute(
                "INSERT OR REPLACE INTO turns (run, problem_id, sample, turn, completion_key, cached, "
                "candidate_sha256, candidate_path, reason, evaluation_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                (key.run, key.problem_id, key.sample, key.turn, completion_key, int(cached),
                 candidate.sha256 if candidate else None, candidate.path if candidate else None, reason, _now()))

    def add(self, run: str, result: EvalResult, *, candidate_source: str, problem_source: str,
            reused_from: int | None = None, turn: TurnKey | None = None) -> int:
        """Insert one evaluation (and its sources and build) in a single transaction; with the `turn` whose answer
        it judged, that turn points to it in the same transaction (a run killed at any moment has each evaluation
        with its turn or neither, so a resumed run evaluates no answer twice), and an evaluation the turn had before
        (a harness error, evaluated again) goes: a run keeps one evaluation per turn."""
        stored = result.model_copy(update={"build": result.build.model_copy(update={"log": ""})}) \
            if result.build else result
        with self.db:
            self.db.execute("BEGIN")
            for sha, text in ((result.candidate_sha256, candidate_source), (result.problem_sha256, problem_source)):
                self.db.execute("INSERT OR IGNORE INTO sources (sha256, text) VALUES (?, ?)", (sha, text))
            if result.build:
                b = result.build
                # A fresh build's log replaces an older one of the same key (--force rebuilds).
                self.db.execute(
                    f"INSERT OR {'IGNORE' if b.cached else 'REPLACE'} INTO builds (build_sha256, source_sha256, "
                    "status, duration_s, error, log, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (b.build_sha256, result.candidate_sha256, b.status, b.duration_s, b.error, b.log, _now()))
            stored = stored.model_copy(update={"workloads": ()})  # in workload_results, a row each
            workloads = [w.model_dump_json() for w in result.workloads]
            sealed = dict(zip(SEALED_EVALUATION, (
                result.candidate_sha256, result.problem_sha256, result.device_name, result.target,
                result.protocol_version, result.status, json.dumps(list(result.flags)), stored.model_dump_json()),
                strict=True))
            cursor = self.db.execute(
                "INSERT INTO evaluations (run, created_at, problem_id, problem_sha256, candidate_path, "
                "candidate_sha256, build_sha256, target, device_name, torch_version, protocol_version, status, "
                "speedup, runtime_ms, ref_runtime_ms, error, flags, result_json, reused_from, seal) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run, _now(), result.problem_id, result.problem_sha256, result.candidate_path,
                 result.candidate_sha256, result.build.build_sha256 if result.build else None, result.target,
                 result.device_name, result.torch_version, result.protocol_version, result.status, result.speedup,
                 result.runtime_ms, result.ref_runtime_ms, result.error, sealed["flags"], sealed["result_json"],
                 reused_from, seal_row(with_workloads(sealed.values(), workloads))))
            evaluation_id = cursor.lastrowid
            assert evaluation_id is not None  # an INSERT's row
            self.db.executemany(
                "INSERT INTO workload_results (evaluation_id, position, workload, public, timed, status, speedup, "
                "result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(evaluation_id, i, w.name, int(w.public), int(w.timed), w.status, w.speedup, text)
                 for i, (w, text) in enumerate(zip(result.workloads, workloads))])
            if turn is not None:
                self._point_turn(run, turn, evaluation_id)
            return evaluation_id

    def _point_turn(self, run: str, turn: TurnKey, evaluation_id: int) -> None:
        """Within add's transaction: the turn points to its new evaluation, and the one it replaces is forgotten."""
        assert turn.run == run, (turn, run)  # a turn's evaluation belongs to the turn's run
        where = "WHERE run = ? AND problem_id = ? AND sample = ? AND turn = ?"
        key = (turn.run, turn.problem_id, turn.sample, turn.turn)
        row = self.db.execute(f"SELECT evaluation_id FROM turns {where}", key).fetchone()
        assert row is not None, f"{turn} is evaluated before it is stored"  # the loop stores each answer first
        self.db.execute(f"UPDATE turns SET evaluation_id = ? {where}", (evaluation_id, *key))
        if row[0] is not None:
            self.db.execute("UPDATE evaluations SET reused_from = NULL WHERE reused_from = ?", (row[0],))
            self.db.execute("DELETE FROM evaluations WHERE id = ?", (row[0],))

    # ---- reading ----

    def add_baseline(self, key: BaselineKey, baseline: Baseline) -> None:
        text = baseline.model_dump_json()
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO baselines (problem_sha256, device_name, target, torch_version, "
                            "dtype, protocol_version, kind, baseline_json, created_at, seal) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*key, text, _now(), seal_row((*key, text))))

    def baselines(self, problem_sha256: str, device_name: str, target: str, torch_version: str,
                  dtype: str) -> dict[str, Baseline]:
        """Every stored kind of baseline of a problem on a device, under the current protocol (one that fails
        its seal is left out, to be measured again)."""
        key = (problem_sha256, device_name, target, torch_version, dtype, PROTOCOL_VERSION)
        rows = self.db.execute("SELECT kind, baseline_json, seal FROM baselines WHERE problem_sha256 = ? "
                               "AND device_name = ? AND target = ? AND torch_version = ? AND dtype = ? "
                               "AND protocol_version = ?", key)
        return {kind: Baseline.model_validate_json(text) for kind, text, digest in rows
                if sealed_row(digest, (*key, kind, text), f"the {kind} baseline of problem {problem_sha256[:12]}")}

    def add_peaks(self, device_name: str, target: str, torch_version: str, peaks: Peaks) -> None:
        row = (device_name, target, torch_version, peaks.model_dump_json())
        self.db.execute("INSERT OR REPLACE INTO peaks (device_name, target, torch_version, peaks_json, created_at, "
                        "seal) VALUES (?, ?, ?, ?, ?, ?)", (*row[:3], row[3], _now(), seal_row(row)))

    def peaks(self, device_name: str, target: str, torch_version: str) -> Peaks | None:
        """The device's measured peaks (None where they fail their seal: they are measured again)."""
        found = self.db.execute("SELECT peaks_json, seal FROM peaks WHERE device_name = ? AND target = ? "
                                "AND torch_version = ?", (device_name, target, torch_version)).fetchone()
        if not found or not sealed_row(found[1], (device_name, target, torch_version, found[0]),
                                    f"the peaks of {device_name}"):
            return None
        return Peaks.model_validate_json(found[0])

    # Eight arguments, the columns a result is reused on: a record of them waits for eval/pipeline.py, its caller,
    # which issue 57's evaluation context is rewriting.
    def find(self, candidate_sha256: str, problem_sha256: str, device_name: str, target: str,  # noqa: PLR0913
             build_protocol: int, sandboxed: bool = True, dtype: str = "float32",
             check: CheckSpec = TRUTH) -> tuple[int, EvalResult] | None:
        """The latest reusable evaluation of this candidate on this problem and device, under the current
        evaluation protocol, build recipe, dtype and check (timeouts, harness errors and results timed on a contended
        device are retried; a sandboxed run takes no result of an unsandboxed one)."""
        unsandboxed = "AND e.flags NOT LIKE '%\"unsandboxed\"%' " if sandboxed else ""
        rows = self.db.execute(
            f"SELECT e.id, b.log, e.seal, {', '.join('e.' + c for c in SEALED_EVALUATION)} "
            "FROM evaluations e LEFT JOIN builds b USING (build_sha256) "
            "WHERE e.candidate_sha256 = ? AND e.problem_sha256 = ? AND e.device_name = ? AND e.target = ? "
            "AND e.protocol_version = ? AND json_extract(e.result_json, '$.build_protocol') = ? "
            "AND json_extract(e.result_json, '$.dtype') = ? "
            "AND e.status NOT IN ('timeout', 'harness_error') AND e.flags NOT LIKE '%\"contended\"%' "
            f"{unsandboxed}ORDER BY e.id DESC",
            (candidate_sha256, problem_sha256, device_name, target, PROTOCOL_VERSION, build_protocol, dtype))
        for row_id, build_log, digest, *sealed in rows:
            workloads = self._workload_rows(row_id)
            if not sealed_row(digest, with_workloads(sealed, workloads), f"evaluation {row_id}"):
                continue
            result = self._load(sealed[-1], build_log, workloads)
            if result.check_spec == check:
                return row_id, result
        return None

    def _workload_rows(self, evaluation_id: int) -> list[str]:
        return [text for (text,) in self.db.execute(
            "SELECT result_json FROM workload_results WHERE evaluation_id = ? ORDER BY position", (evaluation_id,))]

    @staticmethod
    def _load(result_json: str, log: str | None, workloads: Sequence[str] = ()) -> EvalResult:
        result = EvalResult.model_validate_json(result_json)
        if workloads:
            result = result.model_copy(update={"workloads": tuple(map(WorkloadResult.model_validate_json,
                                                                      workloads))})
        if result.build and log is not None:
            result = result.model_copy(update={"build": result.build.model_copy(update={"log": log})})
        return result

    def completion(self, key: str) -> Completion | None:
        row = self.db.execute("SELECT completion_json FROM completions WHERE key = ?", (key,)).fetchone()
        return Completion.model_validate_json(row[0]) if row else None

    def turns(self, run: str) -> dict[tuple[str, int, int], TurnRecord]:
        """The run's turns by (problem id, sample, turn)."""
        rows = self.db.execute(
            "SELECT t.problem_id, t.sample, t.turn, t.completion_key, t.cached, t.candidate_sha256, t.candidate_path, "
            "t.reason, t.evaluation_id, c.completion_json, s.text, c.request_json FROM turns t "
            "JOIN completions c ON c.key = t.completion_key LEFT JOIN sources s ON s.sha256 = t.candidate_sha256 "
            "WHERE t.run = ?", (run,))
        return {(r[0], r[1], r[2]): TurnRecord.from_row(r) for r in rows}

    def evaluation(self, evaluation_id: int) -> EvalResult:
        row = self.db.execute("SELECT e.result_json, b.log FROM evaluations e LEFT JOIN builds b USING (build_sha256) "
                              "WHERE e.id = ?", (evaluation_id,)).fetchone()
        result_json, log = row
        return self._load(result_json, log, self._workload_rows(evaluation_id))

    def run_config(self, name: str) -> str | None:
        row = self.db.execute("SELECT config FROM runs WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def run_prices(self, name: str) -> tuple[float, float] | None:
        """The prices a run was given (USD per million prompt / completion tokens), if any."""
        config = json.loads(self.run_config(name) or "{}")
        if config.get("price_in") is None:
            return None
        return float(config["price_in"]), float(config.get("price_out") or 0.0)

    def usage(self, run: str) -> RunUsage:
        """Answers used by a run's turns (how many came from the response cache) and their tokens."""
        totals = RunUsage()
        for cached, completion_json in self.db.execute(
                "SELECT t.cached, c.completion_json FROM turns t JOIN completions c ON c.key = t.completion_key "
                "WHERE t.run = ?", (run,)):
            totals = totals.plus(Completion.model_validate_json(completion_json).usage, cached=bool(cached))
        return totals

    def runs(self) -> list[RunInfo]:
        rows = self.db.execute(
            "SELECT r.name, r.created_at, r.kind, r.target, r.device_name, r.model, "
            "CASE WHEN r.config IS NULL THEN NULL ELSE COALESCE(json_extract(r.config, '$.backend'), 'cuda') END, "
            "(SELECT COUNT(*) FROM evaluations e WHERE e.run = r.name), "
            "(SELECT COUNT(*) FROM turns t WHERE t.run = r.name), "
            "(SELECT COALESCE(SUM(json_extract(c.completion_json, '$.usage.prompt_tokens') "
            "   + json_extract(c.completion_json, '$.usage.completion_tokens')), 0) "
            "   FROM turns t JOIN completions c ON c.key = t.completion_key WHERE t.run = r.name), "
            "r.hidden = 1, r.finished_at IS NOT NULL FROM runs r ORDER BY r.created_at, r.rowid")
        return [RunInfo.from_row(row) for row in rows]

    def set_hidden(self, name: str, hidden: bool) -> None:
        """Leave a run out of the side-by-side reports (or show it again); nothing of it is deleted."""
        self.db.execute("UPDATE runs SET hidden = ? WHERE name = ?", (int(hidden), name))

    def delete_run(self, name: str) -> tuple[int, int]:
        """Forget a run: its row, its evaluations and its turns (how many of each). Sources, builds, baselines
        and paid answers stay: they are shared, and a run made again is served from them."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            turns = self.db.execute("DELETE FROM turns WHERE run = ?", (name,)).rowcount
            self.db.execute("UPDATE evaluations SET reused_from = NULL WHERE run != ? AND reused_from IN "
                            "(SELECT id FROM evaluations WHERE run = ?)", (name, name))  # other runs keep theirs
            evaluations = self.db.execute("DELETE FROM evaluations WHERE run = ?", (name,)).rowcount
            self.db.execute("DELETE FROM runs WHERE name = ?", (name,))
        return evaluations, turns

    def results(self, run: str) -> list[EvalResult]:
        return [result for _, result in self.evaluations(run)]

    def evaluations(self, run: str) -> list[tuple[int, EvalResult]]:
        """The run's evaluations with their row ids (what turns point to), oldest first."""
        rows = self.db.execute(
            "SELECT e.id, e.result_json, b.log FROM evaluations e LEFT JOIN builds b USING (build_sha256) "
            "WHERE e.run = ? ORDER BY e.id", (run,))
        return [(row_id, self._load(result_json, log, self._workload_rows(row_id)))
                for row_id, result_json, log in rows.fetchall()]

    def source(self, sha256: str) -> str | None:
        row = self.db.execute("SELECT text FROM sources WHERE sha256 = ?", (sha256,)).fetchone()
        return row[0] if row else None
