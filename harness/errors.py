"""The root of the harness's own errors, and the two kinds the command line ends with a status of their own
(cli/exits.py maps them). A candidate's failure is never one of these: it is a verdict (child/common.EvalFailure),
and a failure of the harness during an evaluation is the result's `harness_error`, not an exception that escapes."""

from __future__ import annotations


class HarnessError(Exception):
    """Raised by the harness about its input, its settings, its machine or itself: `except HarnessError` catches
    all of them (an error of Python's, pydantic's or torch's is not one)."""


class InputError(HarnessError):
    """Bad input, named and explained, or a machine that cannot do what was asked (no GPU for --target cuda, no
    sandbox, no Ray): the command line says it in one message and exits 2, nothing half-written."""


class HarnessFailed(HarnessError):
    """Some evaluations got no verdict because the harness or the machine failed, not the candidate: the command
    line says how many and exits 3, after the results it has."""

    def __init__(self, faults: int, advice: str):
        super().__init__(f"{faults} harness error(s): {advice}")
        self.faults = faults
        self.advice = advice
