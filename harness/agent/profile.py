"""What the `profile` tool answers: where a candidate's time goes, from the evaluation's one profiled forward
(child/coverage.py: its kernels and PyTorch's operators, timed on the device or the cores) and its timing against
the problem's minimal bytes and FLOPs: a source evaluated before is served from the store. On a GPU with NVIDIA
Nsight Compute (ncu), also a short metric set per kernel of one checked call (eval/counters.py): a source evaluated
before without them is evaluated again, with one more run under ncu, and stored with them."""

from __future__ import annotations

from harness.eval.context import ProblemContext
from harness.eval.counters import PATH_ENV
from harness.types import RAN, EvalResult


def profile_record(result: EvalResult, context: ProblemContext) -> dict:
    coverage, runtime = result.coverage, result.runtime_ms
    kernels: list[dict] = []
    if coverage is not None:
        total = coverage.candidate_ms + coverage.pytorch_ms + coverage.other_ms
        kernels = [{"name": k.name, "owner": k.owner, "ms": round(k.ms, 4),
                    "share": round(k.ms / total, 4) if total > 0 else None} for k in coverage.top]
    eager = context.eager
    seconds = runtime / 1e3 if runtime else None
    return {
        "problem": result.problem_id, "status": result.status, "error": result.error if result.status != "correct"
        else None, "runtime_ms": runtime, "ref_runtime_ms": result.ref_runtime_ms, "speedup": result.speedup,
        "flags": list(result.flags),
        "coverage": None if coverage is None else {
            "share": coverage.share, "candidate_ms": coverage.candidate_ms, "pytorch_ms": coverage.pytorch_ms,
            "other_ms": coverage.other_ms, "calls": coverage.calls, "triton_launches": coverage.triton_launches},
        "kernels": kernels,
        "speed_of_light": {
            "bytes": eager.bytes_moved if eager else None, "flops": eager.flops if eager else None,
            "achieved_gbs": round(eager.bytes_moved / seconds / 1e9, 2) if eager and eager.bytes_moved and seconds
            else None,
            "achieved_tflops": round(eager.flops / seconds / 1e12, 4) if eager and eager.flops and seconds else None,
            "sol_ms": context.sol_ms, "sol_fraction": context.sol_fraction(runtime)},
        "ncu": ncu_record(result),
    }


def ncu_record(result: EvalResult) -> dict:
    """Nsight Compute's kernels, or why there are none."""
    counters = result.counters
    if counters is None:
        why = ("the cpu target has no Nsight Compute" if result.target == "cpu" else
               f"ncu was not found (PATH, CUDA_HOME, {PATH_ENV})" if result.status in RAN
               else "the candidate's code never ran to a judged output")
        return {"kernels": [], "note": why}
    return {"kernels": [k.model_dump() for k in counters.kernels], "launches": counters.launches,
            "note": counters.error, "seconds": counters.seconds}
