"""Every flag a result can carry, in one table: its name, whether it keeps the result from being counted, what raises
it and what it means. Modules raise flags by these names, never by string literals; README's flag table, the
report's explanations (report/explain.py) and the counting rule (types.EvalResult.counted) come from here, and
tests/unit/test_flags.py fails where any of them, or a literal anywhere in harness/, disagrees."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Who decides a flag, all in the parent: the static rules read the source before the build (eval/rules.py);
# coverage is what the profiled forward ran (eval/kernel_use.py); plausibility is the judge's figures read against
# the baselines and the device (eval/plausibility.py); contention is other processes on the cores or the GPU
# (eval/plausibility.py, eval/gpu_load.py); the problem's check is its reference output's informativeness; the
# sandbox choice is --sandbox off.
RaisedBy = Literal["static rules", "coverage", "plausibility", "contention", "the problem's check",
                   "the sandbox choice"]


@dataclass(frozen=True)
class Flag:
    name: str
    excludes: bool  # a correct result with it is in no fast_p, geometric mean or "best"; else it only informs
    raised_by: RaisedBy
    meaning: str  # one sentence: README's table and the report's explanation


NOISY_TIMING = "noisy_timing"
TORCH_OPS = "torch_ops"
TORCH_FALLBACK = "torch_fallback"
UNSANDBOXED = "unsandboxed"
IMPLAUSIBLE_SPEEDUP = "implausible_speedup"
FASTER_THAN_LIGHT = "faster_than_light"
REFERENCE_SLOWED = "reference_slowed"
HIDDEN_WORK = "hidden_work"
TIMING_DISPUTED = "timing_disputed"
CONTENDED = "contended"
UNINFORMATIVE = "uninformative_problem"
NO_KERNEL_RAN = "no_kernel_ran"
LOW_COVERAGE = "low_coverage"
LOW_BACKWARD_COVERAGE = "low_backward_coverage"
INTERPRETED = "interpreted"

TABLE: tuple[Flag, ...] = (
    Flag(NOISY_TIMING, False, "plausibility",
         "the timing stopped at its budget before the relative standard error reached its target"),
    Flag(TORCH_OPS, False, "static rules",
         "PyTorch compute ops in forward beside the candidate's kernels (counted while its own kernels do most of "
         "the work)"),
    Flag(TORCH_FALLBACK, False, "static rules",
         "a kernel guarded by try/except with a PyTorch path; whether the kernel ran is measured"),
    Flag(UNSANDBOXED, False, "the sandbox choice",
         "evaluated with --sandbox off: the candidate's code ran without isolation"),
    Flag(IMPLAUSIBLE_SPEEDUP, True, "plausibility",
         "faster than the plausible ceiling over eager (--max-speedup, or the problem's MAX_SPEEDUP)"),
    Flag(FASTER_THAN_LIGHT, True, "plausibility",
         "faster than the problem's minimal bytes and FLOPs allow at the device's physical ceiling"),
    Flag(REFERENCE_SLOWED, True, "plausibility",
         "the reference ran slower beside this candidate than in a clean process, or a thread of the candidate's "
         "ran while the reference was timed"),
    Flag(HIDDEN_WORK, True, "plausibility",
         "work the timer did not see: another stream's kernels, or an output still being made when it was read"),
    Flag(TIMING_DISPUTED, True, "plausibility",
         "the judge's own clock saw more time around the candidate's calls than its runner reported"),
    Flag(CONTENDED, True, "contention",
         "other processes used the device while it was timed: not the numbers an idle machine gives"),
    Flag(UNINFORMATIVE, True, "the problem's check",
         "the problem's reference output cannot tell a right answer from a wrong one at this tolerance: the verdict "
         "says nothing"),
    Flag(NO_KERNEL_RAN, True, "coverage",
         "correct, but none of the candidate's own kernels ran in its forward: it is rejected, PyTorch did the work"),
    Flag(LOW_COVERAGE, True, "coverage",
         "its own kernels did less than the required share of the measured work; PyTorch did the rest"),
    Flag(LOW_BACKWARD_COVERAGE, True, "coverage",
         "a training problem: its own kernels did less than the required share of the backward's work; PyTorch's "
         "autograd did the rest"),
    Flag(INTERPRETED, True, "coverage",
         "its Triton kernels ran in Triton's CPU interpreter: correct, but the time is not a kernel's"),
)
FLAGS = {flag.name: flag for flag in TABLE}
EXCLUDING = frozenset(flag.name for flag in TABLE if flag.excludes)
MEANINGS = {flag.name: flag.meaning for flag in TABLE}


def merge_flags(*groups: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Flags from several sources (static rules, plausibility, the GPU check), in order, each once."""
    return tuple(dict.fromkeys(flag for group in groups for flag in group))


def counts(status: str, speedup: float | None, flags: tuple[str, ...]) -> bool:
    """The counting rule: correct, with a speedup, and no flag that makes its speed untrustworthy."""
    return status == "correct" and speedup is not None and not EXCLUDING & set(flags)


def markdown_table() -> str:
    """README's flag table (tests/unit/test_flags.py compares them)."""
    rows = [f"| `{f.name}` | {'excludes' if f.excludes else 'informs'} | {f.raised_by} | {f.meaning} |"
            for f in TABLE]
    return "\n".join(["| flag | kind | raised by | what it means |", "| --- | --- | --- | --- |", *rows])
