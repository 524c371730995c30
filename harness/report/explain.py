"""What each verdict and flag means, in the words a report shows next to it (README's Verdicts say the same).

One table for every place that explains a result to a person: the HTML report's candidate pages and filters.
tests/unit/test_report_details.py checks that every flag the harness can raise has a line here.
"""

from __future__ import annotations

STATUS_MEANINGS = {
    "correct": "within the check on every trial of every workload, and was timed",
    "incorrect": "wrong values, shape, dtype, device or output type on some workload, or it modified its inputs",
    "compile_error": "did not build or import; the compiler's lines are below",
    "runtime_error": "raised or crashed (segfault, os._exit, illegal memory access) while it was evaluated",
    "timeout": "its build or its evaluation ran past the timeout and was killed with its process group",
    "rejected": "refused by a static integrity rule, caught patching torch or the clocks at run time, or correct "
                "while none of its own kernels ran",
    "no_code": "no candidate: the answer held no fenced block defining ModelNew",
    "harness_error": "no verdict: the harness or the machine failed around the candidate (never its fault; the "
                     "next run evaluates it again)",
}

FLAG_MEANINGS = {
    # excluding: the result is correct, but its speed is not counted (types.EXCLUDING_FLAGS)
    "implausible_speedup": "faster than the plausible ceiling over eager (--max-speedup, or the problem's "
                           "MAX_SPEEDUP)",
    "faster_than_light": "faster than the problem's minimal bytes and FLOPs allow at the device's physical ceiling",
    "reference_slowed": "the reference ran slower beside this candidate than in a clean process, or a thread of the "
                        "candidate's ran while the reference was timed",
    "hidden_work": "work the timer did not see: another stream's kernels, or an output still being made when it "
                   "was read",
    "timing_disputed": "the judge's own clock saw more time around the candidate's calls than its runner reported",
    "contended": "other processes used the device while it was timed: not the numbers an idle machine gives",
    "uninformative_problem": "the problem's reference output cannot tell a right answer from a wrong one at this "
                             "tolerance: the verdict says nothing",
    "low_coverage": "its own kernels did less than the required share of the measured work; PyTorch did the rest",
    "interpreted": "its Triton kernels ran in Triton's CPU interpreter: correct, but the time is not a kernel's",
    # informing: shown, still counted
    "noisy_timing": "the timing stopped at its budget before the relative standard error reached its target",
    "torch_ops": "PyTorch compute ops in forward beside the candidate's kernels (counted while its own kernels "
                 "do most of the work)",
    "torch_fallback": "a kernel guarded by try/except with a PyTorch path; whether the kernel ran is measured",
    "unsandboxed": "evaluated with --sandbox off: the candidate's code ran without isolation",
}
