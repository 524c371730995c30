from pathlib import Path

import pytest

from harness.checks import check_spec
from harness.evidence import Coverage, KernelTime
from harness.llm.prompts import DEFAULT_DIR, PromptError, Prompts
from harness.problems import index as problems
from harness.problems.workload_file import public_source
from harness.types import BuildResult, CheckResult, EvalResult, TargetFacts, Timing
from harness.workloads import WorkloadResult
from tests.conftest import REPO

GPU = TargetFacts(target="cuda", name="NVIDIA H100 80GB HBM3", compute_capability="9.0", sm_count=132,
                  memory_gb=85.0, l2_cache_mb=50.0, bandwidth_gbs=3350, peak_tflops={"bf16": 989, "fp32": 67})
CPU = TargetFacts(target="cpu", name="AMD EPYC", cores=2, vector_isa="AVX2 + FMA (256-bit)", memory_gb=24.0)


def result(status, **fields):
    return EvalResult(problem_id="cpu/relu", problem_sha256="0" * 64, candidate_path=None, candidate_sha256="1" * 64,
                      target="cpu", device_name="cpu", torch_version="x", status=status, **fields)


def test_first_turn_holds_task_reference_facts_and_example():
    problem = problems.resolve("level1/reverse_cumsum", REPO / "problems")
    system, user = Prompts("cuda").first_messages(problem, GPU)
    assert system["role"] == "system" and "CUDA" in system["content"]
    text = user["content"]
    assert "Problem `level1/reverse_cumsum`" in text
    assert public_source(Path(problem.path).read_text(), problem.workloads) in text
    for fact in ("H100", "compute capability 9.0", "132 streaming multiprocessors", "3350 GB/s", "50.0 MB",
                 "bf16 989"):
        assert fact in text, fact
    assert "no_implicit_headers=True" in text and "class ModelNew" in text and "torch/extension.h" in text
    assert "no fallback" in text


@pytest.mark.parametrize("kind", ["cuda", "cpu", "triton"])
def test_a_training_problem_s_first_turn_has_the_contract_and_a_training_example(kind):
    problem = problems.resolve("cpu/layernorm_training", REPO / "problems")
    _, user = Prompts("cpu" if kind == "cpu" else "cuda", backend="triton" if kind == "triton" else "cuda"
                      ).first_messages(problem, CPU if kind == "cpu" else GPU)
    text = user["content"]
    assert "This is a training problem" in text and "torch.autograd.Function" in text
    assert (DEFAULT_DIR / kind / "training_solution.py").read_text() in text
    assert (DEFAULT_DIR / kind / "example_solution.py").read_text() not in text  # the forward example gives way
    forward = problems.resolve("cpu/relu", REPO / "problems")
    assert "training problem" not in Prompts("cpu").first_messages(forward, CPU)[1]["content"]


def test_cpu_first_turn_has_cpu_facts():
    problem = problems.resolve("cpu/relu", REPO / "problems")
    _, user = Prompts("cpu").first_messages(problem, CPU)
    assert "2 cores" in user["content"] and "AVX2" in user["content"] and "at::parallel_for" in user["content"]


def test_triton_prompt_asks_for_triton_kernels_on_either_target():
    problem = problems.resolve("level1/reverse_cumsum", REPO / "problems")
    system, user = Prompts("cuda", backend="triton").first_messages(problem, GPU)
    assert "Triton" in system["content"] and "CUDA" not in system["content"]
    text = user["content"]
    assert "@triton.jit" in text and "tl.constexpr" in text and 'input_precision="ieee"' in text
    assert "load_inline" not in text and "interpreter" not in text and "3350 GB/s" in text
    assert (REPO / "prompts" / "triton" / "example_solution.py").read_text() in text
    _, cpu_user = Prompts("cpu", backend="triton").first_messages(problems.resolve("cpu/relu", REPO / "problems"), CPU)
    assert "Triton's interpreter" in cpu_user["content"] and "2 cores" in cpu_user["content"]


def test_feedback_for_each_outcome():
    prompts = Prompts("cpu")
    log = "main.cpp:5:5: error: expected ';' before 'return'\n    5 |     return out;\n      |     ^~~~~~\nninja: x\n"
    build = BuildResult(status="compile_error", build_sha256="2" * 64, directory="/d", duration_s=1.0, log=log,
                        error="expected ';'")
    text = prompts.feedback(result("compile_error", error="expected ';'", build=build), turns_left=1)["content"]
    assert "did not build" in text and "error: expected ';' before 'return'" in text and "^~~~~~" in text
    assert "last attempt" in text

    check = CheckResult(status="incorrect", trials=1, max_abs_err=0.5, max_rel_err=0.25, mismatch_fraction=0.125,
                        atol=1e-4, rtol=1e-4, message="values differ")
    text = prompts.feedback(result("incorrect", check=check, error="values differ"), turns_left=3)["content"]
    assert "values differ" in text and "0.5" in text and "12.5%" in text and "last attempt" not in text

    t = Timing(median_ms=2.0, mean_ms=2.0, std_ms=0.1, min_ms=1.9, n=10, rse=0.01)
    r = Timing(median_ms=5.0, mean_ms=5.0, std_ms=0.1, min_ms=4.9, n=10, rse=0.01)
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=r, speedup=2.5), turns_left=2)["content"]
    assert "2.000 ms" in text and "5.000 ms" in text and "2.50x" in text and "faster" in text
    assert "speed of light" not in text  # not known for this problem: not said
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=r, speedup=2.5), turns_left=2,
                            sol_fraction=0.42)["content"]
    assert "at 42% of the hardware's speed of light" in text
    assert "profiled call" not in text  # no coverage measured: nothing said
    coverage = Coverage(share=0.12, candidate_ms=0.12, pytorch_ms=0.88, calls=1,
                        top=(KernelTime(name="aten::addmm", owner="pytorch", ms=0.8),
                             KernelTime(name="relu_kernel", owner="candidate", ms=0.12),
                             KernelTime(name="aten::add", owner="pytorch", ms=0.08)))
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=r, speedup=2.5, coverage=coverage),
                            turns_left=2)["content"]
    assert "your kernels did 12% of the measured work; PyTorch did the rest: aten::addmm 80%, aten::add 8%" in text
    assert "does not count" not in text
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=r, speedup=2.5, coverage=coverage,
                                   flags=("low_coverage",)), turns_left=2)["content"]
    assert "It does not count as a custom kernel: PyTorch did most of the work" in text
    decoy = Coverage(share=0.0, candidate_ms=0.0, pytorch_ms=1.0, calls=0)
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=r, speedup=2.5, coverage=decoy),
                            turns_left=2)["content"]
    assert "none of your extension's functions ran in forward" in text

    for status in ("runtime_error", "timeout", "no_code", "rejected"):
        text = prompts.feedback(result(status, error=f"the {status} message"), turns_left=2)["content"]
        assert f"the {status} message" in text


def test_feedback_quotes_what_the_answer_printed_and_caught_where_it_did_not_pass():
    prompts = Prompts("cpu")
    printed = "could not build the extension, using PyTorch: RuntimeError"
    text = prompts.feedback(result("rejected", error="rejected [no_kernel_ran]\nThe build of extension 'k' failed",
                                   output=printed), turns_left=2)["content"]
    assert "The build of extension 'k' failed" in text
    assert f"What your code printed in its build, set-up and first call (the end of it):\n```\n{printed}\n```" in text
    t = Timing(median_ms=2.0, mean_ms=2.0, std_ms=0.1, min_ms=1.9, n=10, rse=0.01)
    caught = "Your code caught an exception from its extension function 'relu' in forward: RuntimeError: bad tile"
    text = prompts.feedback(result("correct", runtime=t, ref_runtime=t, speedup=1.0, flags=("low_coverage",),
                                   error=caught, output=printed), turns_left=2)["content"]
    assert caught in text and printed not in text  # why PyTorch did the work; a correct answer's prints are its own


def test_user_prompt_dir_is_validated_and_strict(tmp_path):
    with pytest.raises(PromptError, match="lacks cpu/system.j2"):
        Prompts("cpu", tmp_path)
    (tmp_path / "cpu").mkdir()
    for name in ("example_problem.py", "example_solution.py", "training_problem.py", "training_solution.py",
                 "feedback.j2", "first_turn.j2"):
        (tmp_path / "cpu" / name).write_text((DEFAULT_DIR / "cpu" / name).read_text())
    (tmp_path / "common").mkdir()
    for path in (DEFAULT_DIR / "common").glob("*.j2"):
        (tmp_path / "common" / path.name).write_text(path.read_text())
    (tmp_path / "cpu" / "system.j2").write_text("You write {{ langauge }} kernels.")  # a typo
    problem = problems.resolve("cpu/relu", REPO / "problems")
    with pytest.raises(PromptError, match="system.j2.*langauge"):
        Prompts("cpu", tmp_path).first_messages(problem, CPU)


@pytest.mark.parametrize("kind", ["cuda", "cpu", "triton"])
def test_the_prompt_says_the_dtype_and_its_tolerance(kind):
    problem = problems.resolve("cpu/relu", REPO / "problems")
    target = "cpu" if kind == "cpu" else "cuda"
    prompts = Prompts(target, backend="triton" if kind == "triton" else "cuda")
    fp32 = prompts.first_messages(problem, CPU if kind == "cpu" else GPU)[1]["content"]
    assert "within\n  0.0001 + 0.0001 x |truth|, plus" in fp32 and "float16" not in fp32
    fp16 = prompts.first_messages(problem, CPU if kind == "cpu" else GPU, "float16")[1]["content"]
    assert "0.01 + 0.01 x |truth| (floating inputs and parameters are float16" in fp16


WORKLOADS_PROBLEM = '''"""A relu."""
import torch
import torch.nn as nn

ROWS = 256
COLS = 1024
TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a batch of one row"},
    {"name": "secret_cols", "set": {"COLS": 4099}, "about": "a row length that is not a multiple of 32"},
    {"name": "drawn", "set": {"ROWS": (3, 777)}, "about": "row counts drawn at random"},
]


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
'''


def test_the_prompt_lists_the_public_workloads_and_counts_the_held_out_ones(tmp_path):
    path = tmp_path / "relu.py"
    path.write_text(WORKLOADS_PROBLEM)
    problem = problems.parse_problem(path, tmp_path)
    _, user = Prompts("cpu").first_messages(problem, CPU)
    text = user["content"]
    assert "`one_row`: ROWS = 1 (a batch of one row)" in text and "2 held-out workloads" in text
    for secret in ("secret_cols", "4099", "777", "WORKLOADS", "drawn at random\"", "row counts drawn"):
        assert secret not in text, secret
    assert "float64" in text and "0.0001 + 0.0001 x |truth|" in text
    _, old = Prompts("cpu").first_messages(problem, CPU, check=check_spec("kernelbench-v0"))
    assert "|out - ref| <= 0.01 + 0.01 x |ref|" in old["content"] and "float64" not in old["content"]


def test_feedback_on_a_held_out_failure_tells_its_kind_never_its_values():
    workloads = (WorkloadResult(name="default", about="as written", public=True, timed=True, status="correct"),
                 WorkloadResult(name="secret_cols", about="a row length that is not a multiple of 32", public=False,
                                status="incorrect", values={"COLS": 4099},
                                message="{'COLS': 4099}: output has shape (256, 1024), expected (256, 4099)"))
    error = "held-out workload (a row length that is not a multiple of 32), trial N: output has shape (N, N)"
    text = Prompts("cpu").feedback(result("incorrect", error=error, workloads=workloads), turns_left=2)["content"]
    assert "a held-out workload, which you are not shown: a row length that is not a multiple of 32" in text
    assert "4099" not in text and "secret_cols" not in text and "any size" in text
    public = (workloads[0], workloads[1].model_copy(update={"public": True}))
    text = Prompts("cpu").feedback(result("incorrect", error="x", workloads=public), turns_left=2)["content"]
    assert "the public workload `secret_cols`" in text
    right = tuple(w.model_copy(update={"status": "correct"}) for w in workloads)
    t = Timing(median_ms=2.0, mean_ms=2.0, std_ms=0.1, min_ms=1.9, n=10, rse=0.01)
    text = Prompts("cpu").feedback(result("correct", runtime=t, ref_runtime=t, speedup=1.0, workloads=right),
                                   turns_left=2)["content"]
    assert "right on all 2 workloads, 1 of them held out" in text
