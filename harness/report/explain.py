"""What each verdict means, in the words a report shows next to it (README's Verdicts say the same).

One table for every place that explains a result to a person: the HTML report's candidate pages and filters. What
each flag means is harness/flags.py's table.
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
