"""The quality gate end to end on the CPU: real child processes, real problem files."""

import json

from tests.conftest import FIXTURES, LEAN_RELU, REPO, json_lines

GATE = FIXTURES / "gate"


def test_the_gate_rejects_each_kind_of_uninformative_problem(cli, tmp_path):
    proc = cli("problems", "validate", "--all", "--problems-dir", GATE, "--results-dir", tmp_path, "--json",
               "--timeout", "30")
    assert proc.returncode == 1, proc.stderr
    records = json_lines(proc.stdout)  # a verdict a problem; a file that is none has no id
    by_id = {r["problem"]: r for r in records if r["problem"]}
    expected = {
        "cpu/mostly_zeros": "mostly zeros",
        "cpu/same_every_seed": "the same for every seed",
        "cpu/random_forward": "not deterministic",
        "cpu/tiny_softmax": "weak check",
        "cpu/crashes": "child process died",
        "cpu/wrong_signature": "does not accept the 2 values get_init_inputs() returns",
        "hangs": "timed out",
        "cpu/cancellation": "tolerance too tight for fp32",
        "cpu/unused_parameter_training": "the gradient of shift: mostly zeros",  # a training problem's gradients too
    }
    for problem_id, reason in expected.items():
        assert not by_id[problem_id]["passed"]
        assert any(reason in r for r in by_id[problem_id]["reasons"]), (problem_id, by_id[problem_id]["reasons"])
    good = by_id["cpu/good"]  # evaluated after the crash: the child was restarted
    assert good["passed"] and good["mode"] == "full" and good["target"] == "cpu", good
    assert good["eager_ms"] > 0 and good["outputs"] == ["float32[2048, 2048]"]
    assert good["bytes_moved"] == 2 * 2048 * 2048 * 4
    malformed = [m for r in records if r["problem"] is None for m in r["reasons"]]
    assert any("not_a_problem.py" in m and "missing class Model" in m for m in malformed)
    # A view of a parameter fed to a module trips torch's FLOP counter under no_grad; not the problem's fault.
    assert by_id["cpu/learned_queries"]["passed"] and by_id["cpu/learned_queries"]["flops"] > 0
    assert sum(not r["passed"] for r in records) == 10 and sum(r["passed"] for r in records) == 2


def test_a_new_problem_from_the_template_passes(cli, tmp_path):
    root = tmp_path / "problems"
    made = cli("problems", "new", "scaled_sigmoid", "--level", "cpu", "--problems-dir", root)
    assert made.returncode == 0, made.stderr
    assert (root / "cpu" / "scaled_sigmoid.py").is_file()
    again = cli("problems", "new", "scaled_sigmoid", "--level", "cpu", "--problems-dir", root)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = cli("problems", "new", "Bad-Name", "--level", "1", "--problems-dir", root)
    assert bad.returncode == 2 and "bad problem name" in bad.stderr
    proc = cli("problems", "validate", "cpu/scaled_sigmoid", "--problems-dir", root, "--results-dir", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_a_hanging_problem_times_out_and_the_next_one_still_runs(cli, tmp_path):
    proc = cli("problems", "validate", GATE / "hangs.py", GATE / "cpu" / "good.py", "--timeout", "20",
               "--results-dir", tmp_path, "--json")
    by_id = {r["problem"].rsplit("/", 1)[-1]: r for r in json_lines(proc.stdout)}
    assert proc.returncode == 1
    assert by_id["hangs.py"]["reasons"] == ["timed out after 20 s (--timeout)"]
    assert by_id["good.py"]["passed"], by_id["good.py"]


def test_validate_needs_a_selection(cli):
    proc = cli("problems", "validate")
    assert proc.returncode == 2 and "--all" in proc.stderr


def test_the_shipped_library_passes_the_gate_here(cli, tmp_path):
    """What CI can check without a GPU: the static gate for every problem, the full gate for the CPU set."""
    listed = json_lines(cli("problems", "list", "--json").stdout)
    counts = {key: 0 for key in ("1", "2", "3", "cpu")}
    for p in listed:
        key = "cpu" if p["target"] == "cpu" else str(p["level"])
        counts[key] = counts.get(key, 0) + 1
    assert counts["1"] >= 100 and counts["2"] >= 100 and counts["3"] >= 50 and counts["cpu"] >= 20, counts
    proc = cli("problems", "validate", "--all", "--results-dir", tmp_path, "--json",
               env={"CUDA_VISIBLE_DEVICES": ""})
    results = json_lines(proc.stdout)
    failures = {r["problem"]: r["reasons"] for r in results if not r["passed"]}  # a malformed file: None
    assert proc.returncode == 0 and not failures, failures
    modes = {(r["mode"], r["target"]) for r in results}
    assert ("full", "cpu") in modes
    assert not [r for r in results if r["warnings"]]
    assert len(results) == len(listed)
    assert str(REPO)  # problems come from this checkout's problems/


def test_a_kernelbench_directory_is_a_problem_set_and_the_gate_runs_on_it(cli, tmp_path):
    root = FIXTURES / "kernelbench"
    listed = json_lines(cli("problems", "list", "--problems-dir", root, "--json").stdout)
    assert [(p["problem"], p["level"], p["target"]) for p in listed] == [("level1/19_ReLU", 1, "cuda")]
    proc = cli("problems", "validate", "level1/19_ReLU", "--problems-dir", root, "--target", "cpu",
               "--results-dir", tmp_path, "--json")
    (result,) = json_lines(proc.stdout)
    assert proc.returncode == 1 and result["mode"] == "full" and result["outputs"] == ["float32[16, 16384]"]
    # It loads and runs; what it lacks is our metadata.
    assert any("TAGS must name" in r for r in result["reasons"]), result["reasons"]
    assert result["eager_ms"] > 0 and result["bytes_moved"] == 2 * 16 * 16384 * 4


WRONG_SIGNATURE = GATE / "cpu" / "wrong_signature.py"


def test_a_foreign_problem_no_answer_can_run_against_is_excluded_before_anything_is_built(cli, tmp_path):
    answer = tmp_path / "answer.py"
    answer.write_text(LEAN_RELU)
    proc = cli("eval", "--target", "cpu", "--problem", WRONG_SIGNATURE, answer, "--results-dir", tmp_path)
    assert proc.returncode == 2 and "no answer can be judged against this problem" in proc.stderr, proc.stderr
    assert "does not accept the 2 values" in proc.stderr and not (tmp_path / "cache").exists()
    proc = cli("run", "--target", "cpu", "--problems", WRONG_SIGNATURE, "--results-dir", tmp_path)
    assert proc.returncode == 2 and "can be used" in proc.stderr, proc.stderr
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps({"problem": str(problem), "source": answer.read_text()})
                                 for problem in (WRONG_SIGNATURE, GATE / "cpu" / "good.py")))
    proc = cli("audit", "--json", "--target", "cpu", "--results-dir", tmp_path, "--timing-budget", "1", answers)
    assert proc.returncode == 0 and "excluded the answers to" in proc.stderr, proc.stderr
    assert [row["problem"] for row in json_lines(proc.stdout)] == [str(GATE / "cpu" / "good.py")]


def test_the_screen_passes_shipped_problems_without_a_child_and_remembers_a_foreign_pass(tmp_path, monkeypatch):
    from harness.problems import gate, index
    from harness.problems.screen import screen

    shipped = index.resolve("cpu/relu", REPO / "problems")
    good = index.resolve(str(GATE / "cpu" / "good.py"), GATE)
    assert screen([shipped], "cpu", tmp_path) == {} and not any(tmp_path.iterdir())  # no child, nothing written
    assert screen([good, good], "cpu", tmp_path) == {}
    monkeypatch.setattr(gate, "run_child_over", lambda *a, **k: (_ for _ in ()).throw(AssertionError("a child")))
    assert screen([good], "cpu", tmp_path) == {}  # remembered by its hash: no child this time
