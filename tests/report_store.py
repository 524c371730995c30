"""A store holding what a real multi-turn run leaves, written through the Store calls the loop and the pipeline
make (ensure_run, add_completion, add_turn, add): a model's run over two problems, two samples,
three turns each (a compile error fixed, a wrong answer fixed, a flagged speedup, a no_code turn), a second model's
run for comparison, and files given to `harness eval`. The HTML report's unit and browser tests read it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.completions import Completion, CompletionRequest, Usage
from harness.evidence import Coverage, KernelTime
from harness.store import Store, TurnKey
from harness.types import BuildResult, Candidate, CheckResult, EvalResult, Timing

DEVICE = "NVIDIA H100 80GB HBM3"
MODEL_RUN, OTHER_RUN, EVAL_RUN = "gpt-x <multi>", "small-model", "eval"
PROBLEMS = ("level1/softmax", "level1/relu")
SYSTEM = "You write fast CUDA kernels for PyTorch models. Answer with one ```python block defining ModelNew."

CUDA_TEMPLATE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
__global__ void {name}_kernel(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = {body};
}}

void {name}_launch(const float* x, float* y, int n) {{
    {name}_kernel<<<(n + {block} - 1) / {block}, {block}>>>(x, y, n);
}}
"""

cpp_source = "torch::Tensor {name}(torch::Tensor x);"

ext = load_inline(name="{name}", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["{name}"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.{name}(x)
'''

TRITON_SOURCE = '''# the model's note: </script><img src=x onerror="document.body.dataset.pwned = 1">
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


# What a flagged evaluation measured, under the flat names it is stored by (harness/figures.py)
FLAGGED_FIGURES = {"build": 18.2, "queue": 0.31, "eval": 3.14, "flagged_eval": 2.87, "setup": 0.842, "check": 1.21,
                   "time": 0.9, "check_inputs": 0.0412, "check_call": 0.611, "judge_ready_s": 1.93,
                   "judge_device_attempts": 1, "runner_ready_s": 2.41, "runner_device_attempts": 2,
                   "runner_wait_ms": 0.412, "contention_check": 0.0213, "deferred_ms": 0.3124, "copy_ms": 0.0118,
                   "runner_stopped": 64, "runner_running": 0}


def timing(ms: float, spread: float = 0.02, forward_ms: float | None = None) -> Timing:
    """forward_ms: timed as a training problem's calls are, forward and backward apart."""
    quantiles = tuple(ms * (1 - spread + 2 * spread * i / 20) + (ms * 0.3 if i == 20 else 0.0) for i in range(21))
    return Timing(median_ms=ms, mean_ms=ms * 1.01, std_ms=ms * spread / 2, min_ms=quantiles[0], n=120,
                  rse=0.004, wall_median_ms=ms + 0.01, quantiles_ms=quantiles, forward_median_ms=forward_ms,
                  backward_median_ms=None if forward_ms is None else ms - forward_ms)


def cuda_source(name: str, body: str, block: int = 256) -> str:
    return CUDA_TEMPLATE.format(name=name, body=body, block=block)


class Writer:
    """Writes turns and evaluations the way harness run does."""

    def __init__(self, store: Store, tmp: Path):
        self.store, self.tmp = store, tmp

    def problem_source(self, problem: str) -> str:
        return f'"""{problem}"""\nimport torch\n\nclass Model(torch.nn.Module):\n    pass\n'

    def result(self, problem: str, source: str, status: str, **extra) -> EvalResult:
        sha = hashlib.sha256(source.encode()).hexdigest()
        built = status not in ("compile_error", "no_code")
        build = None if status == "no_code" else BuildResult(
            status="ok" if built else "compile_error", build_sha256="b" + sha[:20], directory=str(self.tmp / sha[:8]),
            duration_s=21.4, log=extra.pop("log", "ninja: build stopped\n" if not built else "[2/2] c++ ... ok\n"))
        return EvalResult(problem_id=problem, problem_sha256=hashlib.sha256(problem.encode()).hexdigest(),
                          candidate_path=extra.pop("path", None), candidate_sha256=sha, target="cuda",
                          device_name=DEVICE, torch_version="2.11.0", status=status, build=build, **extra)

    def evaluation(self, run: str, result: EvalResult, source: str, turn: TurnKey | None = None) -> int:
        return self.store.add(run, result, candidate_source=source,
                              problem_source=self.problem_source(result.problem_id), turn=turn)

    def conversation(self, run: str, model: str, problem: str, sample: int,
                     turns: list[tuple[str, str | None, EvalResult | None, str]]) -> None:
        """turns: (answer text, extracted source or None, its result, the feedback that follows it)."""
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"Write a faster ModelNew for {problem}.\n\n```python\n"
                                                f"{self.problem_source(problem)}```"}]
        for turn, (answer, source, result, feedback) in enumerate(turns, start=1):
            request = CompletionRequest(model=model, messages=tuple(messages), sample=sample)
            self.store.add_completion(request, Completion(text=answer, finish_reason="stop", duration_s=12.5,
                                                          usage=Usage(prompt_tokens=900 * turn, completion_tokens=700)))
            path = f"solutions/{run}/{problem}/sample{sample}_turn{turn}.py" if source else None
            candidate = (Candidate(path=path, source=source, sha256=hashlib.sha256(source.encode()).hexdigest())
                         if source is not None else None)
            key = TurnKey(run, problem, sample, turn)
            self.store.add_turn(key, completion_key=request.key, cached=False, candidate=candidate,
                                reason=None if source else "no fenced block defines class ModelNew")
            if result is not None:
                self.evaluation(run, result.model_copy(update={"candidate_path": path}), source or "", turn=key)
            messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": feedback}]


def fenced(source: str) -> str:
    return f"Here is a faster version.\n\n```python\n{source}```\n"


def model_run(w: Writer) -> None:
    w.store.ensure_run(MODEL_RUN, kind="run", target="cuda", device_name=DEVICE, model="gpt-x-2026", config="{}")
    broken = cuda_source("softmax_v1", "expf(x[i]) / sum_undeclared")
    fixed = cuda_source("softmax_v2", "expf(x[i])")
    faster = cuda_source("softmax_v3", "__expf(x[i])", block=512)
    compile_log = ("[1/3] nvcc --generate-dependencies-with-compile ... cuda.cu\n"
                   "cuda.cu(7): error: identifier \"sum_undeclared\" is undefined\n"
                   "1 error detected in the compilation of \"cuda.cu\".\nninja: build stopped: subcommand failed.\n")
    cover = Coverage(share=0.94, candidate_ms=0.31, pytorch_ms=0.02, calls=1,
                     top=(KernelTime(name="softmax_v3_kernel", owner="candidate", ms=0.31),
                          KernelTime(name="aten::empty_like", owner="pytorch", ms=0.02)))
    w.conversation(MODEL_RUN, "gpt-x-2026", PROBLEMS[0], 1, [
        (fenced(broken), broken, w.result(PROBLEMS[0], broken, "compile_error", log=compile_log,
                                          error="cuda.cu(7): error: identifier \"sum_undeclared\" is undefined"),
         "Your kernel did not compile:\ncuda.cu(7): error: identifier \"sum_undeclared\" is undefined"),
        (fenced(fixed), fixed, w.result(PROBLEMS[0], fixed, "incorrect", error="values differ from the reference",
                                        check=CheckResult(status="incorrect", trials=1, max_abs_err=0.73,
                                                          max_rel_err=41.2, mismatch_fraction=0.998, atol=1e-4,
                                                          rtol=1e-4, message="trial 0: 99.8% of elements differ")),
         "Your output is wrong: max abs error 0.73, 99.8% of elements differ."),
        (fenced(faster), faster, w.result(PROBLEMS[0], faster, "correct", speedup=2.41,
                                          runtime=timing(0.33, forward_ms=0.125),
                                          ref_runtime=timing(0.795, 0.05, forward_ms=0.285), coverage=cover,
                                          check=CheckResult(status="correct", trials=5, max_abs_err=2e-7,
                                                            max_rel_err=1e-5, mismatch_fraction=0.0, atol=1e-4,
                                                            rtol=1e-4),
                                          stages={"build": 21.4, "queue": 0.8, "eval": 2.4, "check": 1.1, "time": 0.6}),
         "Correct: 0.330 ms against 0.795 ms (2.41x). Make it faster."),
    ])
    w.conversation(MODEL_RUN, "gpt-x-2026", PROBLEMS[0], 2, [
        ("I think we should use shared memory. Let me explain instead of coding.", None,
         w.result(PROBLEMS[0], "", "no_code", error="no fenced block defines class ModelNew"),
         "Your answer held no code block defining ModelNew."),
        (fenced(TRITON_SOURCE.replace("relu", "sm")), TRITON_SOURCE.replace("relu", "sm"),
         w.result(PROBLEMS[0], TRITON_SOURCE.replace("relu", "sm"), "correct", speedup=48.0, runtime=timing(0.0166),
                  ref_runtime=timing(0.797), flags=("implausible_speedup", "hidden_work"), stages=FLAGGED_FIGURES),
         "Correct, but flagged: implausible_speedup, hidden_work."),
    ])
    lean = cuda_source("relu_v1", "fmaxf(x[i], 0.f)")
    w.conversation(MODEL_RUN, "gpt-x-2026", PROBLEMS[1], 1, [
        (fenced(lean), lean, w.result(PROBLEMS[1], lean, "correct", speedup=1.12, runtime=timing(0.118),
                                      ref_runtime=timing(0.132), flags=("noisy_timing",)), "Correct: 1.12x."),
        (fenced(TRITON_SOURCE), TRITON_SOURCE, w.result(PROBLEMS[1], TRITON_SOURCE, "correct", speedup=1.31,
                                                        runtime=timing(0.101), ref_runtime=timing(0.132)),
         "Correct: 1.31x."),
    ])


def other_run(w: Writer) -> None:
    w.store.ensure_run(OTHER_RUN, kind="run", target="cuda", device_name=DEVICE, model="small-model", config="{}")
    for problem, speedup in zip(PROBLEMS, (1.9, 1.45)):
        source = cuda_source(f"other_{problem[-4:]}", "x[i]")
        w.conversation(OTHER_RUN, "small-model", problem, 1, [
            (fenced(source), source, w.result(problem, source, "correct", speedup=speedup, runtime=timing(0.2),
                                              ref_runtime=timing(0.2 * speedup)), "Correct.")])


def eval_run(w: Writer) -> None:
    w.store.ensure_run(EVAL_RUN, kind="eval", target="cuda", device_name=DEVICE)
    source = cuda_source("relu_file", "x[i] > 0 ? x[i] : 0")
    result = w.result(PROBLEMS[1], source, "rejected", path="kernels/relu_cheat.py",
                      error="rejected by static rules:\n  line 3 [patching]: assigning torch.relu")
    w.evaluation(EVAL_RUN, result, source)
    w.evaluation(EVAL_RUN, result, source)  # evaluated again: one row on the board, one candidate in the report


def sample_store(path: Path) -> Store:
    store = Store(path / "harness.db")
    writer = Writer(store, path)
    model_run(writer)
    other_run(writer)
    eval_run(writer)
    return store
