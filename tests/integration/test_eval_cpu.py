"""`harness eval` on the cpu target with real C++ builds, real child processes and a real SQLite file."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from harness.markers import CANDIDATE_STARTS
from harness.store_schema import SCHEMA_VERSION
from harness.types import PROTOCOL_VERSION
from tests.conftest import FIXTURES, LEAN_RELU, REPO, SOLUTIONS, json_lines, run_cli

PROBLEM = FIXTURES / "problems" / "relu.py"
CANDIDATES = {
    "correct": SOLUTIONS / "correct" / "cpu_relu.py",
    "leaky_same_ext_name": SOLUTIONS / "wrong" / "cpu_relu_leaky.py",
    "compile_error": SOLUTIONS / "crash" / "cpu_compile_error.py",
    "no_model_new": SOLUTIONS / "wrong" / "no_model_new.py",
    "segfault": SOLUTIONS / "crash" / "cpu_segfault.py",
    "infinite_loop": SOLUTIONS / "crash" / "cpu_infinite_loop.py",
    "cxx_exception": SOLUTIONS / "crash" / "cpu_cxx_exception.py",
    "os_exit": SOLUTIONS / "crash" / "os_exit.py",
    "correct_after_crashes": SOLUTIONS / "correct" / "cpu_relu_benign_patterns.py",
}
EVAL_TIMEOUT = 40


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def first_run(results_dir):
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results_dir,
                   "--run", "first", "--eval-timeout", EVAL_TIMEOUT, "--timing-budget", "1",
                   *CANDIDATES.values())
    assert proc.returncode == 0, proc.stderr
    rows = json_lines(proc.stdout)
    assert [r["candidate"] for r in rows] == [str(p) for p in CANDIDATES.values()]
    return {name: row for name, row in zip(CANDIDATES, rows)}, proc


def test_json_lines_have_the_documented_fields(first_run):
    rows, _ = first_run
    for row in rows.values():
        fields = {"problem", "candidate", "status", "speedup", "runtime_ms", "ref_runtime_ms", "error", "flags"}
        assert fields <= set(row)
        assert row["problem"] == str(PROBLEM)
        assert isinstance(row["flags"], list)
        assert (row["speedup"] is None) == (row["status"] != "correct")


def test_correct_candidate_is_correct_and_timed(first_run):
    row = first_run[0]["correct"]
    assert row["status"] == "correct", row["error"]
    assert row["error"] is None
    assert row["runtime_ms"] > 0 and row["ref_runtime_ms"] > 0
    assert row["speedup"] == pytest.approx(row["ref_runtime_ms"] / row["runtime_ms"])
    assert row["max_abs_err"] == 0.0
    assert row["coverage"] > 0.9  # its own C++ loop did the work: one profiled forward says so


def test_a_file_without_workloads_is_judged_as_before_on_its_one_public_workload(first_run):
    """A KernelBench file: the problem as written, its 5 trials, its inputs (the labels are today's), timed alone."""
    row = first_run[0]["correct"]
    (default,) = row["workloads"]
    assert default["workload"] == "default" and default["public"] and default["timed"]
    assert default["status"] == "correct" and default["trials"] == 5 and default["values"] == {}
    assert row["speedup"] == pytest.approx(row["ref_runtime_ms"] / row["runtime_ms"])
    assert row["check"] == "truth"


def test_same_extension_name_does_not_collide(first_run):
    # Both candidates build an extension called "relu_ext"; each must run its own code.
    rows = first_run[0]
    assert rows["correct"]["status"] == "correct"
    leaky = rows["leaky_same_ext_name"]
    assert leaky["status"] == "incorrect"
    assert 0.3 < leaky["mismatch_fraction"] < 0.7  # the negative half of randn inputs
    assert leaky["max_abs_err"] > 1e-3
    assert "mismatch" in leaky["error"]


def test_compile_error_carries_the_compiler_message(first_run, results_dir):
    row = first_run[0]["compile_error"]
    assert row["status"] == "compile_error"
    assert "undeclared_identifier_xyz" in row["error"] and "error" in row["error"]
    with sqlite3.connect(results_dir / "harness.db") as db:
        (log,) = db.execute("SELECT b.log FROM evaluations e JOIN builds b USING (build_sha256) "
                            "WHERE e.candidate_path = ?", (str(CANDIDATES["compile_error"]),)).fetchone()
    assert "undeclared_identifier_xyz" in log and "ninja" in log.lower()


def test_crashes_are_recorded_per_candidate(first_run):
    rows = first_run[0]
    assert rows["segfault"]["status"] == "runtime_error"
    assert "SIGSEGV" in rows["segfault"]["error"]
    assert rows["infinite_loop"]["status"] == "timeout"
    assert "timeout" in rows["infinite_loop"]["error"]
    assert rows["cxx_exception"]["status"] == "runtime_error"
    assert "planted failure" in rows["cxx_exception"]["error"]
    assert rows["os_exit"]["status"] == "runtime_error"
    assert "before reporting a result" in rows["os_exit"]["error"]
    assert rows["no_model_new"]["status"] == "no_code"
    # Evaluated after all those crashes, in fresh processes of their own:
    assert rows["correct_after_crashes"]["status"] == "correct", rows["correct_after_crashes"]["error"]


def test_store_keeps_everything(first_run, results_dir):
    with sqlite3.connect(results_dir / "harness.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        rows = db.execute(
            "SELECT e.candidate_path, e.status, e.device_name, e.torch_version, e.protocol_version, "
            "e.problem_sha256, s.text FROM evaluations e JOIN sources s ON s.sha256 = e.candidate_sha256 "
            "WHERE e.run = 'first'").fetchall()
        assert len(rows) == len(CANDIDATES)
        for path, _status, device, torch_version, protocol, problem_sha, source in rows:
            assert source == open(path).read()
            assert device and torch_version and protocol == PROTOCOL_VERSION and len(problem_sha) == 64
        # Two candidates named their extension "relu_ext": two distinct builds.
        builds = db.execute("SELECT COUNT(DISTINCT build_sha256) FROM evaluations WHERE run = 'first' "
                            "AND (candidate_path LIKE '%/cpu_relu.py' OR candidate_path LIKE '%/cpu_relu_leaky.py')"
                            ).fetchone()[0]
        assert builds == 2


def test_second_evaluation_is_served_from_the_store(first_run, results_dir):
    names = ["correct", "leaky_same_ext_name", "compile_error"]
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results_dir,
                   "--run", "second", *(CANDIDATES[n] for n in names), timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json_lines(proc.stdout)
    retried = "contended" in first_run[0]["correct"]["flags"]  # timed while other processes ran: evaluated again
    assert [r["cached"] for r in rows] == [not retried, True, True]
    assert [r["status"] for r in rows] == [first_run[0][n]["status"] for n in names]
    assert retried or rows[0]["speedup"] == first_run[0]["correct"]["speedup"]


def test_force_rebuilds_and_reevaluates_from_scratch(first_run, results_dir):
    # --force means again: a cached build verdict (a false compile_error, say) must not survive it
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results_dir,
                   "--run", "forced", "--force", "--timing-budget", "1", CANDIDATES["correct"],
                   CANDIDATES["compile_error"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = json_lines(proc.stdout)
    assert [(r["status"], r["cached"]) for r in rows] == [("correct", False), ("compile_error", False)]
    assert "build ok" in proc.stderr and "build compile_error" in proc.stderr
    assert "(cached)" not in proc.stderr


def test_table_output_shows_verdicts_and_compiler_tail(first_run, results_dir):
    proc = run_cli("eval", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results_dir,
                   CANDIDATES["correct"], CANDIDATES["compile_error"], env={"COLUMNS": "200"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "correct" in proc.stdout and "compile_error" in proc.stdout
    assert "undeclared_identifier_xyz" in proc.stdout
    assert "Traceback" not in proc.stdout.split("end of the compiler output")[1]


def test_evaluations_without_a_run_name_share_one_run_that_can_be_deleted(first_run, results_dir):
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results_dir,
                   CANDIDATES["compile_error"], timeout=120)  # again, and still no --run
    assert proc.returncode == 0, proc.stderr
    names = [r["run"] for r in json_lines(run_cli("runs", "--json", "--results-dir", results_dir).stdout)]
    assert names.count("eval") == 1 and not [n for n in names if n.startswith("eval-")], names
    proc = run_cli("runs", "--delete", "eval", "nonesuch", "--results-dir", results_dir)
    assert proc.returncode == 2 and "unknown run 'nonesuch'" in proc.stderr  # checked before anything goes
    proc = run_cli("runs", "--delete", "eval", "--json", "--results-dir", results_dir)
    assert proc.returncode == 0, proc.stderr
    (deleted,) = json_lines(proc.stdout)
    assert deleted["run"] == "eval" and deleted["evaluations"] >= 2 and deleted["turns"] == 0
    left = [r["run"] for r in json_lines(run_cli("runs", "--json", "--results-dir", results_dir).stdout)]
    assert "eval" not in left and "first" in left


def test_report_of_the_eval_run(first_run, results_dir):
    proc = run_cli("report", "--json", "--run", "first", "--results-dir", results_dir, timeout=60)
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)
    summary = board["summary"]
    assert summary["candidates"] == len(CANDIDATES) and summary["problems"] == 1
    assert summary["correct_rate"] == pytest.approx(2 / 9)
    (row,) = board["problems"]
    # a result timed while other processes used the cores is flagged contended and not counted
    contended = sum("contended" in f["flags"] for f in board["flagged"])
    assert summary["fast_p"]["0"] == (0.0 if contended == 2 else 1.0), board["flagged"]
    assert row["statuses"]["correct"] == 2 and (row["best_speedup"] is not None or contended == 2)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_the_harness_alone_stops_the_candidate_with_it(first_run, results_dir, tmp_path, signum):
    """SIGTERM or SIGHUP to the harness process only (`timeout`, a job scheduler, `kill`, a closed terminal) stops it
    as Ctrl-C does: the candidate's processes, in sessions of their own that the signal does not reach, are killed
    with it. Before, the harness died at once and this endless loop spun on with nothing left to time it out."""
    cache = tmp_path / "r" / "cache"
    cache.mkdir(parents=True)
    (cache / "builds").symlink_to(results_dir / "cache" / "builds")  # first_run built it
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", "--target", "cpu", "--problem", str(PROBLEM),
                             "--results-dir", str(tmp_path / "r"), str(CANDIDATES["infinite_loop"])],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        deadline = time.monotonic() + 300
        while not any(CANDIDATE_STARTS in log.read_text(errors="replace") for log in
                      cache.glob("eval-*/runner/eval.log")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(1)  # into its loop
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum and f"stopped by {signal.Signals(signum).name}" in stderr, stderr
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert not left, f"still running after the harness ended: {left}"


def test_a_stopped_bench_says_its_temporary_results_are_gone(tmp_path):
    """harness bench without --results-dir or --keep removes its results directory at the end, also when stopped:
    its stop says so from the start, and does not send the user to a store that is gone."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", "bench", "--target", "cpu", "--candidates", "1",
                             "--serial", "0"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)})
    try:
        first = ""
        while not ("keeps it)" in first or "prepared" in first) and proc.poll() is None:  # its first message whole
            # (rich wraps it; without the note, the next message ends the wait)
            first += proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = " ".join((first + rest).split())  # rich wraps lines at its width
    assert "(removed at the end, also when stopped; --keep keeps it) stopped by SIGTERM" in said, said
    assert proc.returncode == 128 + signal.SIGTERM and "in the store" not in said, said
    assert not list(tmp_path.glob("harness-bench-*"))


def test_default_relative_results_dir_works_from_any_directory(tmp_path):
    # The quickstart's default: ./results, relative to wherever the user stands.
    candidate = tmp_path / "answer" / "relu.py"
    candidate.parent.mkdir()
    candidate.write_text(LEAN_RELU)
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--timing-budget", "1", candidate,
                   cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (row,) = json_lines(proc.stdout)
    assert row["status"] == "correct", row["error"]
    assert (tmp_path / "results" / "harness.db").is_file()
