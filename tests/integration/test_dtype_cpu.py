"""`--dtype`: a candidate evaluated in half precision is checked at that dtype's tolerance, reported in it, and never
served a result of another dtype (Triton's interpreter on cpu/relu: no compiler in the way)."""
import json

from tests.conftest import REPO, run_cli, share_builds

RELU = REPO / "tests" / "fixtures" / "solutions" / "triton" / "cpu" / "relu.py"
CPP_RELU = REPO / "solutions" / "reference" / "cpu" / "relu.py"  # float pointers: float32 only


def evaluate(results, *flags, candidate=RELU) -> dict:
    proc = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", candidate, "--results-dir", results,
                   "--json", "--timing-budget", "0.3", "--trials", "2", *flags)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[0])


def test_half_precision_is_checked_reported_and_stored_apart(tmp_path, tmp_path_factory):
    share_builds(tmp_path, tmp_path_factory)
    half = evaluate(tmp_path, "--dtype", "fp16")
    assert half["status"] == "correct" and half["dtype"] == "float16" and not half["cached"], half
    full = evaluate(tmp_path)  # the same file in fp32: evaluated, not the fp16 result
    assert full["status"] == "correct" and full["dtype"] == "float32" and not full["cached"], full
    again = evaluate(tmp_path, "--dtype", "float16")
    # served from the store, unless the first was timed on cores other processes used (contended: tried again)
    assert again["cached"] == ("contended" not in half["flags"]) and again["dtype"] == "float16", (half, again)
    text = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", RELU, "--results-dir", tmp_path,
                   "--dtype", "fp16", env={"COLUMNS": "200"}).stdout
    assert "in float16" in text


def test_a_float_only_kernel_fails_in_half_precision_with_the_reason(tmp_path, tmp_path_factory):
    share_builds(tmp_path, tmp_path_factory)
    half = evaluate(tmp_path, "--dtype", "fp16", candidate=CPP_RELU)
    assert half["status"] in ("runtime_error", "incorrect") and half["dtype"] == "float16", half
    assert "expected a float32 tensor" in (half["error"] or ""), half["error"]  # the kernel's own check


def test_a_bad_dtype_is_refused_before_anything_runs(tmp_path):
    proc = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", RELU, "--results-dir", tmp_path,
                   "--dtype", "fp8")
    assert proc.returncode == 2 and "--dtype" in proc.stderr
    assert not (tmp_path / "harness.db").exists()


def test_informativeness_and_zero_outputs_are_judged_in_the_dtype(tmp_path, tmp_path_factory):
    share_builds(tmp_path, tmp_path_factory)
    """Outputs of ~1e-3 are all within fp16's atol (1e-2) of zero: in fp16 the problem says nothing
    (uninformative_problem) and a zeros kernel is still incorrect (one value where the reference varies); in fp32 the
    same problem is informative and the zeros are simply wrong."""
    small = REPO / "tests" / "fixtures" / "problems" / "small_relu.py"
    zeros = REPO / "tests" / "fixtures" / "solutions" / "triton" / "cpu" / "zeros.py"
    found = {}
    for dtype in ("fp16", "fp32"):
        proc = run_cli("eval", "--target", "cpu", "--problem", small, zeros, "--results-dir", tmp_path, "--json",
                       "--timing-budget", "0.3", "--trials", "2", "--dtype", dtype)
        assert proc.returncode == 0, proc.stderr
        found[dtype] = json.loads(proc.stdout.splitlines()[0])
    half, full = found["fp16"], found["fp32"]
    assert half["status"] == "incorrect" and half["dtype"] == "float16", half
    assert "0 everywhere, where the reference varies" in half["error"], half["error"]
    assert "within atol of 0" in (half["uninformative"] or "") and "uninformative_problem" in half["flags"], half
    assert full["status"] == "incorrect" and full["uninformative"] is None and not full["flags"], full
