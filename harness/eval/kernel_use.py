"""Runtime verdicts from the profiled forward's coverage (child/coverage.py): did the candidate's own kernels do
the work? What running can decide is decided here, by what ran, not by the static rules' reading of the source:

  no_kernel_ran  a forward that passed every check while none of the candidate's kernels ran in it: no call into
                 its extension modules and no Triton launch (on the GPU: nor any kernel launched from them). A
                 kernel built for show, a fallback taken, a build that failed and was caught. It is `rejected`.
  low_coverage   its own kernels did less than the required share of the measured work (Settings.min_coverage,
                 0.5, or the problem's MIN_COVERAGE): PyTorch did the rest, or kernels it generated (torch.compile).
                 Flagged, and counted in no rate.
  low_backward_coverage
                 a training problem: its own kernels did less than that share of the backward's work, measured
                 apart (a custom forward whose backward autograd derives from PyTorch's operators, or that calls
                 autograd on a reference). Flagged, and counted in no rate.
  interpreted    on the cpu target, its Triton kernels ran in Triton's interpreter: correct or not, its time is
                 not a kernel's speed. Flagged, and counted in no rate.

A forward whose calls did no measurable work at all (share None) is judged by its checks alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.evidence import Coverage
from harness.flags import INTERPRETED, LOW_BACKWARD_COVERAGE, LOW_COVERAGE, NO_KERNEL_RAN
from harness.types import Target


@dataclass(frozen=True)
class KernelUse:
    flags: tuple[str, ...] = ()
    rejection: str | None = None  # why a result that passed its checks is rejected


def judge(coverage: Coverage | None, target: Target, min_coverage: float) -> KernelUse:
    """The verdict on a correct result's coverage (None: not measured, nothing to judge)."""
    if coverage is None:
        return KernelUse()
    launched_nothing = target == "cuda" and coverage.candidate_ms == 0 and coverage.pytorch_ms + coverage.other_ms > 0
    if coverage.calls == 0 or launched_nothing:
        return KernelUse((NO_KERNEL_RAN,), _no_kernel_message(coverage))
    flags: tuple[str, ...] = (INTERPRETED,) if target == "cpu" and coverage.triton_launches else ()
    if coverage.share is not None and coverage.share < min_coverage:
        flags += (LOW_COVERAGE,)
    backward = coverage.backward
    if backward is not None and backward.share is not None and backward.share < min_coverage:
        flags += (LOW_BACKWARD_COVERAGE,)
    return KernelUse(flags)


def _no_kernel_message(coverage: Coverage) -> str:
    pytorch = ", ".join(k.name for k in coverage.top if k.owner != "candidate") or "nothing measurable"
    if coverage.calls == 0:
        what = "none of the candidate's kernels ran in its forward (no call into its extension, no Triton launch)"
    else:
        what = "the candidate's extension functions ran in its forward, but launched no kernel of their own"
    message = (f"rejected at run time [{NO_KERNEL_RAN}]: the output was correct, but {what}; PyTorch did the work "
               f"({pytorch}). A kernel built for show, a fallback taken or a build that failed and was caught "
               f"is not a custom kernel.")
    return message
