import json
import sqlite3

import pytest

from harness.checks import check_spec
from harness.eval.build import BUILD_PROTOCOL
from harness.store import Store, StoreError, TurnKey
from harness.store_schema import SCHEMA_VERSION
from harness.types import BuildResult, Candidate, EvalResult, Timing
from harness.workloads import WorkloadResult


def result(candidate="c" * 64, status="correct", speedup=2.0, device="GPU", build_log="full log",
           build_protocol=BUILD_PROTOCOL) -> EvalResult:
    timing = Timing(median_ms=1.0, mean_ms=1.1, std_ms=0.1, min_ms=0.9, n=10, rse=0.01)
    build = BuildResult(status="ok", build_sha256="b" + candidate[1:], directory="/tmp/b", duration_s=3.0,
                        log=build_log)
    return EvalResult(problem_id="level1/x", problem_sha256="p" * 64, candidate_path="a.py", candidate_sha256=candidate,
                      target="cuda", device_name=device, torch_version="2.11", status=status,
                      speedup=speedup if status == "correct" else None, runtime=timing, ref_runtime=timing, build=build,
                      build_protocol=build_protocol, harness_version="0.1.0")


def test_roundtrip_keeps_everything(tmp_path):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r1", kind="eval", target="cuda", device_name="GPU")
        store.add("r1", result(), candidate_source="SRC", problem_source="PROB")
        (loaded,) = store.results("r1")
        assert loaded == result()  # the build log comes back from the builds table
        assert store.source("c" * 64) == "SRC" and store.source("p" * 64) == "PROB"
        assert [r.name for r in store.runs()] == ["r1"] and store.runs()[0].evaluations == 1
    db = sqlite3.connect(tmp_path / "h.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT result_json FROM evaluations").fetchone()[0].count("full log") == 0  # stored once


def test_find_matches_candidate_problem_device_and_skips_timeouts_harness_errors_and_contended(tmp_path):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(), candidate_source="S", problem_source="P")
        store.add("r", result(candidate="d" * 64, status="timeout"), candidate_source="S2", problem_source="P")
        store.add("r", result(candidate="e" * 64, status="harness_error"), candidate_source="S3", problem_source="P")
        contended = result(candidate="f" * 64).model_copy(update={"flags": ("noisy_timing", "contended")})
        store.add("r", contended, candidate_source="S4", problem_source="P")
        row_id, found = store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL)
        assert found.speedup == 2.0 and row_id == 1
        assert store.find("c" * 64, "p" * 64, "other GPU", "cuda", BUILD_PROTOCOL) is None
        assert store.find("c" * 64, "p" * 64, "GPU", "cpu", BUILD_PROTOCOL) is None
        assert store.find("d" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None
        assert store.find("e" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None
        assert store.find("f" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None


def test_a_verdict_of_an_older_build_recipe_is_not_served(tmp_path):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(build_protocol=BUILD_PROTOCOL - 1), candidate_source="S", problem_source="P")
        store.add("r", result(candidate="d" * 64, build_protocol=None), candidate_source="S2", problem_source="P")
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None
        assert store.find("d" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None


def test_newer_schema_is_refused(tmp_path):
    db = sqlite3.connect(tmp_path / "h.db")
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StoreError, match="newer"):
        Store(tmp_path / "h.db")


def test_garbage_file_is_refused(tmp_path):
    (tmp_path / "h.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable SQLite database"):
        Store(tmp_path / "h.db")


def v1_schema() -> str:
    """Version 1 as released: today's core tables, without the run config column and the seals."""
    from harness import store_schema
    lines = [line for line in store_schema.SCHEMA.splitlines()
             if not line.strip().startswith(("config TEXT", "seal", "hidden"))]
    schema = "\n".join(lines).replace("model TEXT,", "model TEXT").replace("evaluations(id),", "evaluations(id)")
    return schema + """
INSERT INTO runs VALUES ('old', '2026-11-22T00:00:00+00:00', 'eval', 'cpu', 'CPU', NULL);
PRAGMA user_version = 1;
"""


def test_a_version_1_database_is_migrated_in_place(tmp_path):
    db = sqlite3.connect(tmp_path / "h.db")
    db.executescript(v1_schema())
    db.close()
    with Store(tmp_path / "h.db") as store:
        assert [r.name for r in store.runs()] == ["old"]
        assert store.run_config("old") is None and store.turns("old") == {}
    db = sqlite3.connect(tmp_path / "h.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"completions", "turns", "baselines", "peaks", "workload_results"} <= tables


def test_a_version_5_database_gains_hidden_and_its_runs_stay_shown(tmp_path):
    from harness import store_schema
    v5 = "\n".join(line for line in store_schema.upgrade_script(0).splitlines()  # a new file's tables, less hidden
                   if not line.strip().startswith(("hidden", "finished_at"))).replace("config TEXT,", "config TEXT")
    db = sqlite3.connect(tmp_path / "h.db")
    db.executescript(v5 + """
INSERT INTO runs VALUES ('old', '2027-01-05T00:00:00+00:00', 'eval', 'cpu', 'CPU', NULL, NULL);
PRAGMA user_version = 5;
""")
    db.close()
    with Store(tmp_path / "h.db") as store:
        (old,) = store.runs()
        assert old.name == "old" and not old.hidden
        store.set_hidden("old", True)
        assert store.runs()[0].hidden
    db = sqlite3.connect(tmp_path / "h.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT hidden FROM runs").fetchall() == [(1,)]


def test_a_version_7_database_gains_finished_and_its_runs_count_as_finished(tmp_path):
    """Whether a run of a version-7 file finished is unknown: a resume without a name must not pick it quietly."""
    from harness import store_schema
    v7 = "\n".join(line for line in store_schema.upgrade_script(0).splitlines()  # a new file's tables, less finished
                   if not line.strip().startswith("finished_at")).replace("DEFAULT 0,", "DEFAULT 0")
    db = sqlite3.connect(tmp_path / "h.db")
    db.executescript(v7 + """
INSERT INTO runs VALUES ('old', '2020-01-05T00:00:00+00:00', 'run', 'cpu', 'CPU', 'm', '{}', 0);
PRAGMA user_version = 7;
""")
    db.close()
    with Store(tmp_path / "h.db") as store:
        assert [(r.name, r.finished) for r in store.runs()] == [("old", True)]
        assert store.ensure_run("new", kind="run", target="cpu", device_name="CPU", model="m", config="{}")
        assert not store.ensure_run("old", kind="run", target="cpu", device_name="CPU", model="m", config="{}")
        assert [(r.name, r.finished) for r in store.runs()] == [("old", False), ("new", False)]  # going again
        store.finish_run("new")
        assert [(r.name, r.finished) for r in store.runs()] == [("old", False), ("new", True)]


def test_baselines_are_kept_per_problem_device_torch_dtype_and_protocol(tmp_path):
    from harness.types import Baseline, Timing
    timing = Baseline(timing=Timing(median_ms=2.0, mean_ms=2.1, std_ms=0.1, min_ms=1.9, n=10, rse=0.01),
                      bytes_moved=4096, flops=None)
    from harness.types import PROTOCOL_VERSION
    key = ("p" * 64, "H100", "cuda", "2.11", "float32", PROTOCOL_VERSION, "eager")
    with Store(tmp_path / "h.db") as store:
        assert store.baselines(*key[:5]) == {}
        store.add_baseline(key, timing)
        assert store.baselines(*key[:5]) == {"eager": timing}
        assert store.baselines(*key[:4], "bfloat16") == {}
    with Store(tmp_path / "h.db") as store:  # it is on disk
        assert store.baselines(*key[:5]) == {"eager": timing}


def test_every_kind_of_baseline_of_a_problem_and_the_device_peaks(tmp_path):
    from harness.types import PROTOCOL_VERSION, Baseline, Peaks, Timing
    t = Timing(median_ms=2.0, mean_ms=2.1, std_ms=0.1, min_ms=1.9, n=10, rse=0.01)
    key = ("p" * 64, "H100", "cuda", "2.11", "float32", PROTOCOL_VERSION)
    with Store(tmp_path / "h.db") as store:
        store.add_baseline(key + ("eager",), Baseline(timing=t, bytes_moved=8))
        store.add_baseline(key + ("compile",), Baseline(error="inductor failed"))
        store.add_baseline(key[:5] + (PROTOCOL_VERSION - 1, "compile-max-autotune"), Baseline(timing=t))
        found = store.baselines(*key[:5])
        assert set(found) == {"eager", "compile"} and found["compile"].timing is None  # current protocol only
        assert store.peaks("H100", "cuda", "2.11") is None
        store.add_peaks("H100", "cuda", "2.11", Peaks(bandwidth_gbs=3000.0, tflops={"bf16": 700.0}))
    with Store(tmp_path / "h.db") as store:
        assert store.peaks("H100", "cuda", "2.11").tflops == {"bf16": 700.0}
        assert store.peaks("H100", "cuda", "2.12") is None


def test_completions_and_turns(tmp_path):
    from harness.completions import Completion, CompletionRequest, Usage
    request = CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},), sample=1)
    completion = Completion(text="```python\nclass ModelNew: ...\n```", usage=Usage(prompt_tokens=10,
                                                                                   completion_tokens=5))
    with Store(tmp_path / "h.db") as store:
        assert store.completion(request.key) is None
        store.add_completion(request, completion)
        assert store.completion(request.key) == completion
        store.ensure_run("r", kind="run", target="cpu", device_name="CPU", model="m", config='{"a": 1}')
        store.add_turn(TurnKey("r", "cpu/relu", 1, 1), completion_key=request.key, cached=False,
                       candidate=Candidate(path="x.py", source="SRC", sha256="s" * 64), reason=None)
        eid = store.add("r", result(), candidate_source="SRC", problem_source="PROB",
                        turn=TurnKey("r", "cpu/relu", 1, 1))
        (turn,) = store.turns("r").values()
        assert (turn.candidate_source, turn.evaluation_id, turn.completion) == ("SRC", eid, completion)
        assert store.usage("r").prompt_tokens == 10 and store.usage("r").requests == 1
        (run,) = store.runs()
        assert (run.requests, run.tokens, run.model) == (1, 15, "m")
        store.ensure_run("r", kind="run", target="cpu", device_name="CPU", model="m", config='{"a": 2}')
        assert store.run_config("r") == '{"a": 2}'


def test_an_evaluation_and_its_turn_are_stored_together_and_a_turn_keeps_one(tmp_path):
    """A run killed at any moment leaves each evaluation with its turn or neither (a resumed run then evaluates no
    answer twice), and a turn evaluated again (a harness error) keeps only its new evaluation."""
    from harness.completions import Completion, CompletionRequest
    request = CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},), sample=1)
    key = TurnKey("r", "level1/x", 1, 1)
    with Store(tmp_path / "h.db") as store:
        store.add_completion(request, Completion(text="x"))
        store.ensure_run("r", kind="run", target="cuda", device_name="GPU", model="m")
        with pytest.raises(AssertionError):  # no such turn: the evaluation is not kept without it
            store.add("r", result(), candidate_source="SRC", problem_source="PROB", turn=key)
        assert store.results("r") == []
        store.add_turn(key, completion_key=request.key, cached=False,
                       candidate=Candidate(path="a.py", source="SRC", sha256="c" * 64), reason=None)
        fault = store.add("r", result(status="harness_error"), candidate_source="SRC", problem_source="PROB", turn=key)
        assert store.turns("r")[("level1/x", 1, 1)].evaluation_id == fault
        again = store.add("r", result(), candidate_source="SRC", problem_source="PROB", turn=key)
        assert store.turns("r")[("level1/x", 1, 1)].evaluation_id == again
        assert [row for row, _ in store.evaluations("r")] == [again] and store.runs()[0].evaluations == 1


def test_a_sandboxed_run_is_not_served_an_unsandboxed_result(tmp_path):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result().model_copy(update={"flags": ("unsandboxed",)}), candidate_source="S",
                  problem_source="P")
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL, sandboxed=False) is not None


def test_deleting_a_run_forgets_its_evaluations_and_turns_and_keeps_what_others_reused(tmp_path):
    from harness.completions import Completion, CompletionRequest
    request = CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},), sample=1)
    with Store(tmp_path / "h.db") as store:
        store.add_completion(request, Completion(text="x"))
        for run in ("a", "b"):
            store.ensure_run(run, kind="run", target="cuda", device_name="GPU", model="m")
        store.add_turn(TurnKey("a", "level1/x", 1, 1), completion_key=request.key, cached=False,
                       candidate=Candidate(path="a.py", source="SRC", sha256="c" * 64), reason=None)
        first = store.add("a", result(), candidate_source="SRC", problem_source="PROB",
                          turn=TurnKey("a", "level1/x", 1, 1))
        store.add("b", result(), candidate_source="SRC", problem_source="PROB", reused_from=first)
        assert store.delete_run("a") == (1, 1)
        assert [r.name for r in store.runs()] == ["b"] and store.results("b") == [result()]
        assert store.completion(request.key) is not None and store.source("c" * 64) == "SRC"  # shared: kept
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is not None  # still served


def test_a_baseline_is_stored_only_if_it_was_timed_undisturbed():
    from harness.eval.baseline import NOISY_BASELINE_RSE, trusted
    from harness.eval.cpu_ceiling import CONTENDED_SHARE
    from harness.types import Baseline

    def timed(rse):
        return Timing(median_ms=1.0, mean_ms=1.0, std_ms=0.1, min_ms=0.9, n=10, rse=rse)

    # confirmed: a second measurement agreed with it (tests/unit/test_baseline_trust.py)
    assert trusted("eager", Baseline(timing=timed(0.01), foreign_cpu=0.02, confirmations=1))
    assert trusted("eager", Baseline(timing=timed(0.01), confirmations=1))  # a GPU's: no cpu share measured
    assert not trusted("eager", Baseline(timing=timed(0.01), foreign_cpu=0.02))  # one measurement alone
    assert trusted("compile", Baseline(error="torch.compile failed"))  # a failure is the problem's, kept
    assert not trusted("eager", Baseline(timing=timed(0.01), foreign_cpu=CONTENDED_SHARE + 0.05, confirmations=1))
    assert not trusted("eager", Baseline(timing=timed(NOISY_BASELINE_RSE * 2), foreign_cpu=0.0, confirmations=1))
    # a torch.compile kind counts by its ratio to eager, timed beside it: kept under load
    assert trusted("compile", Baseline(timing=timed(0.01), foreign_cpu=0.9, eager_ms=2.0))


WORKLOADS = (WorkloadResult(name="default", about="as written", public=True, timed=True, status="correct", trials=5,
                            ref_ms=2.0, candidate_ms=1.0),
             WorkloadResult(name="unaligned", about="rows not a multiple of 32", public=False, status="incorrect",
                            trials=1, values={"ROWS": 999}, message="trial 0: wrong"))


def test_workload_results_are_rows_of_their_own_and_come_back_with_the_evaluation(tmp_path):
    stored = result(status="incorrect").model_copy(update={"workloads": WORKLOADS})
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        row = store.add("r", stored, candidate_source="S", problem_source="P")
        assert store.results("r") == [stored] and store.evaluation(row) == stored
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL)[1].workloads == WORKLOADS
    db = sqlite3.connect(tmp_path / "h.db")
    assert db.execute("SELECT workload, public, timed, status, speedup FROM workload_results ORDER BY position"
                      ).fetchall() == [("default", 1, 1, "correct", 2.0), ("unaligned", 0, 0, "incorrect", None)]
    assert "unaligned" not in db.execute("SELECT result_json FROM evaluations").fetchone()[0]  # stored once


def test_a_result_of_another_check_is_not_served(tmp_path):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result().model_copy(update={"check_spec": check_spec("kernelbench")}), candidate_source="S",
                  problem_source="P")
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL) is None  # the default is truth
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL, check=check_spec("kernelbench"))
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", BUILD_PROTOCOL, check=check_spec("kernelbench-v0")) is None


# Every figure the harness wrote in a result's flat `stages` object before they were typed (b57be04), counts as floats
OLD_STAGES = {
    "build": 21.4, "queue": 0.8, "eval": 4.2, "flagged_eval": 3.9, "setup": 0.9, "compile": 0.4, "autotune": 0.3,
    "check": 1.1, "coverage": 0.2, "time": 1.6, "cpu_jitter": 0.012, "cpu_foreign": 0.02, "cpu_steal": 0.001,
    "check_poisoned": 0.3, "setup_reference": 0.25, "setup_runner": 0.5, "check_inputs": 0.1, "check_reference": 0.15,
    "check_call": 0.45, "check_compare": 0.05, "check_settled": 0.01, "round_trip_ms": 0.05, "runner_wait_ms": 3.5,
    "runner_ready_s": 9.1, "runner_imports_s": 6.2, "runner_device_s": 1.3, "runner_device_attempts": 2.0,
    "runner_triton_s": 0.4, "judge_ready_s": 7.0, "judge_imports_s": 5.1, "judge_device_s": 1.2,
    "judge_device_attempts": 1.0, "runner_stopped": 40.0, "runner_running": 1.0, "child_age_s": 12.5,
    "judge_exit_s": 0.12, "runner_exit_s": 0.05, "contention_check": 0.01, "contention_wait": 2.5,
    "unreported_ms": 0.0123, "deferred_ms": 0.2, "copy_ms": 0.31,
}


def test_a_result_stored_with_the_flat_stages_loads_into_typed_figures_and_writes_them_back_the_same(tmp_path):
    path = tmp_path / "h.db"
    with Store(path) as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(), candidate_source="S", problem_source="P")
        store.add("r", result(candidate="d" * 64), candidate_source="S2", problem_source="P")
    db = sqlite3.connect(path)  # rows as the harness wrote them before; the second from before protocol 19
    before_19 = {**{k: v for k, v in OLD_STAGES.items() if k != "flagged_eval"}, "slowed_eval": 3.9}
    for row_id, stages in ((1, OLD_STAGES), (2, before_19)):
        db.execute("UPDATE evaluations SET result_json = json_set(result_json, '$.stages', json(?)) WHERE id = ?",
                   (json.dumps(stages), row_id))
    db.commit()
    db.close()
    with Store(path) as store:
        now, older = store.results("r")
    figures = now.figures
    assert figures.stages.eval_s == 4.2 and figures.stages.flagged_eval_s == 3.9 and figures.stages.time_s == 1.6
    assert figures.check_parts.poisoned_s == 0.3 and figures.setup_parts.runner_s == 0.5
    assert figures.runner_start.device_attempts == 2 and type(figures.runner_start.device_attempts) is int
    assert figures.judge_start.ready_s == 7.0 and figures.runner_start.triton_s == 0.4
    assert figures.evidence.runner_stopped == 40 and figures.evidence.runner_running == 1
    assert figures.contention.cpu_foreign_share == 0.02 and figures.contention.gpu_wait_s == 2.5
    assert figures.process.child_age_s == 12.5 and figures.evidence.unreported_ms == 0.0123
    assert figures.flat() == OLD_STAGES  # every figure has a field: none is lost, and JSON names stay as they were
    assert json.loads(now.model_dump_json())["stages"] == OLD_STAGES
    assert now.summary()["stages"] == {name: round(value, 3) for name, value in OLD_STAGES.items()}
    assert older.figures == figures  # slowed_eval, as flagged_eval was called before protocol 19
