"""The store's tables (SQLite), by schema version: the whole schema for a new file, and what each older
version lacks. The version lives in PRAGMA user_version."""

SCHEMA_VERSION = 8

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    kind TEXT NOT NULL,            -- 'eval', 'run', 'api' or 'bench'
    target TEXT NOT NULL,
    device_name TEXT NOT NULL,
    model TEXT,                    -- the model that wrote the candidates, NULL for files
    config TEXT,                   -- JSON: how the run generates (model, sampling, turns, ...), NULL for eval
    hidden INTEGER NOT NULL DEFAULT 0, -- 1: left out of `harness report` unless named (`harness runs --hide`)
    finished_at TEXT               -- a run or generate that went through every turn (NULL: going, stopped or failed)
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
    reused_from INTEGER REFERENCES evaluations(id),
    seal TEXT                      -- seal.py's keyed digest of the row: a row that fails it is never served
);
CREATE INDEX IF NOT EXISTS evaluations_identity
    ON evaluations (candidate_sha256, problem_sha256, device_name, target, protocol_version);
CREATE INDEX IF NOT EXISTS evaluations_run ON evaluations (run);
"""

WORKLOADS = """
CREATE TABLE IF NOT EXISTS workload_results (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,     -- its place among the problem's workloads (0: default, the problem as written)
    workload TEXT NOT NULL,        -- its name
    public INTEGER NOT NULL,       -- 1: shown to the model, 0: held out
    timed INTEGER NOT NULL,        -- 1: part of the speedup
    status TEXT NOT NULL,          -- correct, incorrect, runtime_error, ..., skipped, not_run
    speedup REAL,                  -- timed: reference median / candidate median
    result_json TEXT NOT NULL,     -- the WorkloadResult: errors, values, message, medians
    PRIMARY KEY (evaluation_id, position)
);
"""

CONVERSATIONS = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,          -- CompletionRequest.key: model, messages, sampling, sample index
    model TEXT NOT NULL,
    request_json TEXT NOT NULL,    -- the CompletionRequest (no key, no URL credentials)
    completion_json TEXT NOT NULL, -- the Completion: text, finish_reason, usage, attempts, ...
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    run TEXT NOT NULL REFERENCES runs(name),
    problem_id TEXT NOT NULL,
    sample INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    completion_key TEXT NOT NULL REFERENCES completions(key),
    cached INTEGER NOT NULL,       -- 1: the answer came from the response cache (not paid by this run)
    candidate_sha256 TEXT REFERENCES sources(sha256),  -- NULL when nothing could be extracted
    candidate_path TEXT,
    reason TEXT,                   -- why nothing was extracted
    evaluation_id INTEGER REFERENCES evaluations(id),  -- NULL until evaluated
    created_at TEXT NOT NULL,
    PRIMARY KEY (run, problem_id, sample, turn)
);
"""

BASELINES = """
CREATE TABLE IF NOT EXISTS baselines (
    problem_sha256 TEXT NOT NULL,
    device_name TEXT NOT NULL,
    target TEXT NOT NULL,
    torch_version TEXT NOT NULL,
    dtype TEXT NOT NULL,
    protocol_version INTEGER NOT NULL,
    kind TEXT NOT NULL,            -- 'eager', 'compile', 'compile-max-autotune' (types.BASELINE_KINDS)
    baseline_json TEXT NOT NULL,   -- a Baseline: the timing (or why it failed), bytes moved and FLOPs
    created_at TEXT NOT NULL,
    seal TEXT,
    PRIMARY KEY (problem_sha256, device_name, target, torch_version, dtype, protocol_version, kind)
);
"""

PEAKS = """
CREATE TABLE IF NOT EXISTS peaks (
    device_name TEXT NOT NULL,
    target TEXT NOT NULL,
    torch_version TEXT NOT NULL,
    peaks_json TEXT NOT NULL,      -- Peaks: measured memory bandwidth and GEMM FLOP/s per dtype
    created_at TEXT NOT NULL,
    seal TEXT,
    PRIMARY KEY (device_name, target, torch_version)
);
"""

# Version 1 predates the LLM loop: it lacks the run config and the conversation tables.
# Version 2 predates the integrity checks: it lacks the baselines. Version 3 lacks the measured peaks. Version 4
# lacks the seals: its rows stay readable, and are measured again before anything is served from them.
MIGRATE_1_TO_2 = "ALTER TABLE runs ADD COLUMN config TEXT;\n" + CONVERSATIONS
SEAL = {table: f"ALTER TABLE {table} ADD COLUMN seal TEXT;\n" for table in ("evaluations", "baselines", "peaks")}
# Version 5 lacks runs.hidden: its runs are all shown.
HIDDEN = "ALTER TABLE runs ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;\n"


# Version 6 lacks the per-workload results: its evaluations had one workload, the problem as written.
# Version 7 lacks runs.finished_at. Whether its runs finished is unknown, so they count as finished: a resume without
# a name never quietly picks one of them; --run NAME --resume still continues any.
FINISHED = "ALTER TABLE runs ADD COLUMN finished_at TEXT;\nUPDATE runs SET finished_at = created_at;\n"


def upgrade_script(version: int) -> str:
    """What a file at `version` runs to reach SCHEMA_VERSION ("" if nothing)."""
    sealed = SEAL["evaluations"]
    script = {0: SCHEMA + CONVERSATIONS + BASELINES + PEAKS, 1: MIGRATE_1_TO_2 + sealed + BASELINES + PEAKS,
              2: sealed + BASELINES + PEAKS, 3: sealed + SEAL["baselines"] + PEAKS,
              4: sealed + SEAL["baselines"] + SEAL["peaks"]}.get(version, "")
    if 1 <= version <= 5:  # version 0 is a new file: SCHEMA has it
        script += HIDDEN
    if version < 7:
        script += WORKLOADS
    if 1 <= version < 8:
        script += FINISHED
    return script
