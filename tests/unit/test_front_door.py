"""The command line's front door (issue 24): each command's help lists what it uses, a flag error is one line,
every --json is JSON Lines in one vocabulary, and runs can be hidden from the report. No builds."""
import json
import re

import pytest

from harness.cli.main import build_parser, main
from harness.cli.options import selector
from harness.store import Store
from tests.conftest import FIXTURES, json_lines
from tests.unit.test_store import result

EVAL_ONLY = ("--force", "--trials", "--build-timeout", "--eval-timeout", "--timing-budget", "--build-workers",
             "--gpus", "--executor", "--ray-address", "--compile-baselines", "--contention-wait", "--sandbox",
             "--max-speedup", "--min-coverage")
OLD_NAMES = {"name", "device_name", "problem_id", "id"}


@pytest.fixture
def harness(capsys, tmp_path, monkeypatch):
    """The `harness` command in this process (its parser, its exit status): (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def call(*argv) -> tuple[int, str, str]:
        try:
            code = main([str(a) for a in argv])
        except SystemExit as stop:  # --help, and argparse's errors
            code = stop.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return call


def flags_in(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*\b", text))


def test_generate_lists_only_the_options_it_uses(harness):
    generate = flags_in(harness("generate", "--help")[1])
    assert {"--target", "--dtype", "--problems", "--run", "--json", "--results-dir", "--db", "--model"} <= generate
    assert not generate & set(EVAL_ONLY), generate & set(EVAL_ONLY)
    assert set(EVAL_ONLY) <= flags_in(harness("run", "--help")[1])  # run evaluates: it keeps them all
    assert harness("generate", "--trials", "3", "--target", "cpu") == (
        2, "", "harness generate: error: unrecognized arguments: --trials 3 (see harness generate --help)\n")


def test_problem_is_a_hidden_alias_that_adds_to_problems(harness, tmp_path):
    for command in ("run", "generate", "baseline"):
        shown = flags_in(harness(command, "--help")[1])
        assert "--problems" in shown and "--problem" not in shown, command
        args = build_parser().parse_args([command, "--problem", "cpu/relu", "--problem", "level1/x",
                                          "--problems", "cpu,level2"])
        assert selector(args) == "cpu/relu,level1/x,cpu,level2"
    assert "--problem" in flags_in(harness("eval", "--help")[1])  # eval's one problem: documented, as it was
    code, out, err = harness("generate", "--target", "cpu", "--problem", "cpu/relu", "--problems", "cpu/softmax",
                             "--json", "--results-dir", tmp_path / "results", "--solutions-dir", tmp_path / "s")
    assert code == 0, err
    assert sorted(r["problem"] for r in json_lines(out)) == ["cpu/relu", "cpu/softmax"]


@pytest.mark.parametrize(("argv", "line"), [
    (["eval", "--problem", "x", "--bogus", "a.py"],
     "harness eval: error: unrecognized arguments: --bogus (see harness eval --help)"),
    (["eval", "--problem", "x", "--trials", "0", "a.py"],
     "harness eval: error: argument --trials: must be a positive integer, got 0 (see harness eval --help)"),
    (["problems", "list", "--level", "one"],
     "harness problems list: error: argument --level: invalid int value: 'one' (see harness problems list --help)"),
    (["runs", "--json", "--hide"],
     "harness runs: error: argument --hide: expected at least one argument (see harness runs --help)"),
    ([], "harness: error: the following arguments are required: COMMAND (see harness --help)"),
])
def test_a_flag_error_is_one_line_naming_the_command(harness, argv, line):
    assert harness(*argv) == (2, "", line + "\n")


def old_names(record, where: str = "") -> list[str]:
    """Keys of the old vocabulary anywhere in a record (nested objects and lists too)."""
    if isinstance(record, list):
        return [found for item in record for found in old_names(item, where)]
    if not isinstance(record, dict):
        return []
    return [f"{where}.{key}" for key in record if key in OLD_NAMES] + [
        found for key, value in record.items() for found in old_names(value, f"{where}.{key}")]


@pytest.fixture
def store(harness, tmp_path):
    """A results directory with a run of files (one evaluation) and a generated run (offline: no model)."""
    results = tmp_path / "results"
    with Store(results / "harness.db") as db:
        db.ensure_run("evals", kind="eval", target="cuda", device_name="GPU")
        db.add("evals", result(), candidate_source="SRC", problem_source="PROB")
    code, _, err = harness("generate", "--target", "cpu", "--problems", "cpu/relu", "--run", "gen", "--json",
                           "--results-dir", results, "--solutions-dir", tmp_path / "solutions")
    assert code == 0, err
    return results


@pytest.fixture
def json_of(harness):
    def records_of(*argv) -> list[dict]:
        code, out, err = harness(*argv, "--json")
        assert code in (0, 1), err  # doctor: 1 where something it checks is missing
        records = [json.loads(line) for line in out.splitlines()]
        assert records and all(isinstance(r, dict) for r in records), out  # an object a line
        assert not [found for r in records for found in old_names(r)], (argv, [old_names(r) for r in records])
        return records
    return records_of


def test_every_json_output_is_lines_of_objects_in_one_vocabulary(store, json_of):
    where = ("--results-dir", store)
    runs = json_of("runs", *where)
    assert [(r["run"], r["hidden"]) for r in runs] == [("evals", False), ("gen", False)]
    assert runs[0]["device"] == "GPU" and all(r["device"] and r["created_at"] for r in runs)
    summaries = json_of("report", *where)
    assert [s["run"] for s in summaries] == ["evals", "gen"] and summaries[0]["device"] == "GPU"
    (board,) = json_of("report", "--run", "evals", *where)
    assert board["summary"]["run"] == "evals" and board["problems"][0]["problem"] == "level1/x"
    (problem,) = json_of("problems", "list", "--problems-dir", FIXTURES / "kernelbench")
    assert problem["problem"] == "level1/19_ReLU"
    (shown,) = json_of("problems", "show", "cpu/relu")
    assert shown["problem"] == "cpu/relu" and "class Model" in shown["source"]
    (verdict,) = json_of("problems", "validate", "--static", FIXTURES / "problems" / "relu.py", *where)
    assert verdict["problem"].endswith("relu.py") and verdict["mode"] == "static" and "reasons" in verdict
    assert {s["setting"] for s in json_of("config", "show")} >= {"trials", "dtype"}
    assert [c["cache"] for c in json_of("cache", *where)] == ["build", "triton", "pch"]
    (doctor,) = json_of("doctor", *where)
    assert doctor["status"] in ("ok", "warn", "fail") and {c["check"] for c in doctor["checks"]} >= {"ninja"}


def test_hidden_runs_leave_the_report_unless_named(store, harness, json_of):
    where = ("--results-dir", store)
    code, _, err = harness("runs", "--hide", "evalz", *where)
    assert code == 2 and "unknown run 'evalz'; did you mean evals" in err
    assert json_of("runs", "--hide", "evals", *where) == [{"run": "evals", "hidden": True}]
    assert [(r["run"], r["hidden"]) for r in json_of("runs", *where)] == [("evals", True), ("gen", False)]
    assert "hidden" in harness("runs", *where)[1]
    assert [s["run"] for s in json_of("report", *where)] == ["gen"]
    assert "evals" not in harness("report", *where)[1]
    code, _, err = harness("report", "--html", store / "report.html", *where)
    assert code == 0 and "(1 run)" in err, err
    assert [b["summary"]["run"] for b in json_of("report", "--run", "evals", *where)] == ["evals"]
    assert [s["run"] for s in json_of("report", "--runs", "evals,gen", *where)] == ["evals", "gen"]
    harness("runs", "--hide", "gen", *where)
    code, _, err = harness("report", *where)
    assert code == 2 and "every run" in err and "--unhide" in err
    assert json_of("runs", "--unhide", "evals", "gen", *where) == [{"run": "evals", "hidden": False},
                                                                   {"run": "gen", "hidden": False}]
    assert [s["run"] for s in json_of("report", *where)] == ["evals", "gen"]
