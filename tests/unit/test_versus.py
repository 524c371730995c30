"""KernelBench's pipeline (harness/eval/versus.py) run by real child processes on fake KernelBench checkouts: the
fakes have its module layouts and function signatures, compile nothing and record what they were called with."""
import json
import subprocess

import pytest

from harness.cli.bench import show, speedups
from harness.cli.main import main
from harness.eval import versus
from harness.eval.bench import Measurement
from harness.types import EvalResult

RESULT = '''
class KernelExecResult:  # shaped like KernelBench's
    def __init__(self, compiled=False, correctness=False, metadata=None, runtime=-1.0, ref_runtime=-1.0):
        self.compiled, self.correctness, self.metadata = compiled, correctness, metadata or {}
        self.runtime, self.runtime_stats, self.ref_runtime = runtime, {}, ref_runtime
'''

COMPILE = '''
import json, os, time
from pathlib import Path


def record(build_dir, **fields):
    marks = Path(build_dir).parent / "marks"
    marks.mkdir(exist_ok=True)
    with open(marks / "calls.jsonl", "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "build_dir": str(build_dir), **fields}) + "\\n")


def build_compile_cache(custom_model_src: str, verbose: bool = False, build_dir=None):
    marks = Path(build_dir).parent / "marks"
    marks.mkdir(exist_ok=True)
    (marks / f"compiling-{os.getpid()}").touch()
    deadline = time.monotonic() + 20  # wait for another worker to be compiling too (a serial pool never is)
    while len(list(marks.glob("compiling-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    Path(build_dir).mkdir(parents=True, exist_ok=True)
    (Path(build_dir) / "built.py").write_text(custom_model_src)
    record(build_dir, op="compile", workers=len(list(marks.glob("compiling-*"))), verbose=verbose)
    if "NOBUILD" in custom_model_src:
        return False, "", "nvcc: no such kernel"
    return True, "", None
'''

EVAL = '''
def eval_kernel_against_ref(original_model_src: str, custom_model_src: str, seed_num: int = 42,
                            num_correct_trials: int = 1, num_perf_trials: int = 10, measure_performance: bool = False,
                            timing_method: str = "cuda_event", verbose: bool = False, build_dir=None, device=None,
                            backend: str = "cuda", precision=None, check_for_excessive_speedup: bool = True,
                            excessive_speedup_threshold: float = 10):
    return judge(**locals())
'''

OLD_EVAL = '''
from . import utils


def eval_kernel_against_ref(original_model_src: str, custom_model_src: str, seed_num: int = 42,
                            num_correct_trials: int = 1, num_perf_trials: int = 10, verbose: bool = False,
                            measure_performance: bool = False, build_dir=None, device=None):
    return judge(**locals())
'''

JUDGE = '''
def judge(original_model_src, custom_model_src, build_dir, **keywords):
    built = Path(build_dir) / "built.py"
    record(build_dir, op="eval", reference=original_model_src, cached=built.is_file() and
           built.read_text() == custom_model_src, keywords={k: str(v) for k, v in keywords.items()})
    print("KernelBench prints on stdout too")
    if "RAISE" in custom_model_src:
        raise RuntimeError("boom")
    if "CRASH" in custom_model_src:
        os._exit(7)
    if "HANG" in custom_model_src:
        time.sleep(60)
    if "WRONG" in custom_model_src:
        return KernelExecResult(compiled=True, metadata={"correctness_issue": "Output mismatch"})
    return KernelExecResult(compiled=True, correctness=True, runtime=1.5, ref_runtime=3.0)
'''


def checkout(tmp_path, layout: str = "new", broken: bool = False):
    root = tmp_path / f"kb-{layout}{'-broken' if broken else ''}"
    if layout == "new":
        package = root / "src" / "kernelbench"
        eval_source = EVAL
    else:
        package = root / "src"
        eval_source = OLD_EVAL
        (package / "utils.py").parent.mkdir(parents=True)
        (package / "utils.py").write_text("")
    package.mkdir(parents=True, exist_ok=True)
    head = "import not_installed_anywhere_xyz\n" if broken else ""
    (package / "eval.py").write_text(head + COMPILE + RESULT + eval_source + JUDGE)
    return root


def calls(scratch) -> list[dict]:
    return [json.loads(line) for line in (scratch / "marks" / "calls.jsonl").read_text().splitlines()]


def sources(*tags: str) -> list[str]:
    return [f"# candidate {i} {tag}\nclass ModelNew: pass\n" for i, tag in enumerate(tags)]


@pytest.mark.parametrize("layout", ["new", "old"])
def test_both_layouts_are_found_and_every_candidate_gets_its_result(tmp_path, layout):
    found = versus.locate(checkout(tmp_path, layout))
    assert found.module == ("kernelbench.eval" if layout == "new" else "src.eval")
    assert set(versus.probe(found)) == {"build_compile_cache", "eval_kernel_against_ref"}
    problem = tmp_path / "problem.py"
    problem.write_text("class Model: pass  # the reference\n")
    scratch = tmp_path / "scratch"
    batch = sources("a", "b", "c", "d")
    told = []
    run = versus.run(found, problem, batch, 2, 60, scratch, shape="lean", progress=told.append)
    assert [r.status for r in run.results] == ["correct"] * 4 and run.correct == run.compiled == 4
    assert told[0].startswith("compile step ") and told[0].endswith(", 4 of 4 built") and len(told) == 5
    assert [line.split(" (")[0] for line in told[1:]] == [f"{i} of 4 evaluated" for i in range(1, 5)]
    assert all("(correct, " in line for line in told[1:])
    assert all(r.built and r.runtime == 1.5 and r.ref_runtime == 3.0 for r in run.results)
    summary = run.summary()
    assert summary["mode"] == "kernelbench" and summary["candidates"] == 4 and summary["statuses"] == {"correct": 4}
    assert summary["kernelbench"] == found.identity
    assert run.wall_s >= run.compile_s > 0 and run.per_min > 0

    records = calls(scratch)
    compiles = [r for r in records if r["op"] == "compile"]
    evals = [r for r in records if r["op"] == "eval"]
    assert len(compiles) == len(evals) == 4
    # the compile step: two worker processes, each compiling while the other did
    assert len({r["pid"] for r in compiles}) == 2 and all(r["workers"] == 2 for r in compiles)
    # then a fresh process per evaluation, in the build directory its compile filled, with the script's settings
    assert len({r["pid"] for r in evals}) == 4 and not {r["pid"] for r in evals} & {r["pid"] for r in compiles}
    assert {r["build_dir"] for r in evals} == {r["build_dir"] for r in compiles} and all(r["cached"] for r in evals)
    assert all(r["reference"] == problem.read_text() for r in evals)
    keywords = evals[0]["keywords"]
    assert (keywords["num_correct_trials"], keywords["num_perf_trials"]) == ("5", "100")
    assert keywords["measure_performance"] == "True" and keywords["verbose"] == "False"
    assert keywords.get("backend", "cuda") == "cuda"  # the old signature has none, and gets none


def test_the_kernelbench_that_ran_is_named_by_its_modules_and_its_commit(tmp_path):
    root = checkout(tmp_path)
    alone = versus.locate(root).identity
    assert alone["commit"] is None and alone["module"] == "kernelbench.eval"

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), "-c", "user.name=kb", "-c", "user.email=kb@example.com", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "a KernelBench")
    named = versus.locate(root).identity
    assert named["commit"] == git("rev-parse", "HEAD") and named["package_sha256"] == alone["package_sha256"]
    (root / "src" / "kernelbench" / "timing.py").write_text("# its timing module, changed\n")
    assert versus.locate(root).identity["package_sha256"] != alone["package_sha256"]
    inside = versus.locate(checkout(root / "vendored"))  # a folder of another repository: not its commit
    assert inside.identity["commit"] is None


def test_a_failing_candidate_is_its_own_result(tmp_path):
    found = versus.locate(checkout(tmp_path))
    problem = tmp_path / "problem.py"
    problem.write_text("class Model: pass\n")
    batch = sources("ok", "RAISE", "CRASH", "WRONG", "NOBUILD", "HANG", "ok")
    run = versus.run(found, problem, batch, 2, 5, tmp_path / "scratch")
    status = [r.status for r in run.results]
    assert status == ["correct", "failed", "failed", "incorrect", "correct", "failed", "correct"]
    raised, crashed, wrong, unbuilt, hung = run.results[1:6]
    assert "RuntimeError: boom" in raised.error
    assert "exited with status 7" in crashed.error and "KernelBench prints on stdout too" in crashed.error
    assert wrong.error == "Output mismatch" and wrong.compiled and not wrong.correct
    assert not unbuilt.built and unbuilt.build_error == "nvcc: no such kernel"
    assert "killed after the 5 s timeout" in hung.error
    assert run.correct == 3 and run.compiled == 4


def test_a_checkout_whose_eval_module_does_not_import_is_a_clear_error(tmp_path):
    found = versus.locate(checkout(tmp_path, broken=True))
    with pytest.raises(versus.KernelBenchError) as caught:
        versus.probe(found)
    message = str(caught.value)
    assert "kernelbench.eval" in message and "No module named 'not_installed_anywhere_xyz'" in message
    assert str(found.directory / "shim") in message
    (found.directory / "shim").mkdir()
    (found.directory / "shim" / "not_installed_anywhere_xyz.py").write_text("")  # an empty stand-in
    assert set(versus.probe(found)) == {"build_compile_cache", "eval_kernel_against_ref"}


def test_a_directory_that_is_no_checkout_is_a_clear_error(tmp_path):
    with pytest.raises(versus.KernelBenchError) as caught:
        versus.locate(tmp_path)
    assert str(tmp_path) in str(caught.value) and "src/kernelbench/eval.py" in str(caught.value)


def test_bench_with_a_kernelbench_dir_that_is_no_checkout_exits_2(capsys):
    assert main(["bench", "--kernelbench", "/nonexistent"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "/nonexistent is not a KernelBench checkout" in message and "src/kernelbench/eval.py" in message


def test_bench_versus_kernelbench_needs_the_checkout(capsys):
    assert main(["bench", "--versus", "kernelbench"]) == 2
    assert "--kernelbench DIR" in capsys.readouterr().err


def test_the_kernelbench_pass_is_a_row_and_a_ratio(capsys):
    done = EvalResult(problem_id="p", problem_sha256="a", candidate_path=None, candidate_sha256="b", target="cuda",
                      device_name="d", torch_version="t", status="correct", stages={"build": 20.0, "eval": 3.0})
    judged = versus.Candidate(built=True, judged=True, compiled=True, correct=True, compile_s=30.0, eval_s=9.0)
    passes = [Measurement("pipelined", "lean", 1, 60.0, [done] * 30),
              versus.KernelBenchRun("lean", 120.0, 60.0, 60.0, [judged] * 30, correct=30, compiled=30)]
    ratios = speedups(passes)
    assert ratios == {"lean: pipelined / kernelbench": 2.0}
    assert passes[1].summary()["stages_s"] == {"build": 30.0, "eval": 9.0}
    show(passes, ratios)
    printed = capsys.readouterr().out
    assert "kernelbench" in printed and "lean: pipelined / kernelbench: 2.00x" in printed
