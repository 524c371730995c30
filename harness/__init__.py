"""kernel-harness: evaluate custom kernels against PyTorch references, honestly and fast.

The vocabulary: `Evaluator` (batches of (problem, source) pairs, for RL and search loops), `run` (the main job,
`harness run` as a call) with `RunRequest` and `Connection`, `Settings`, and what comes back: `EvalResult` with
its `Status`, for a `Problem` and a `Candidate`. Bad input raises one of the errors, before anything runs.
"""

from harness.api import Connection, Evaluator, RunError, RunRequest, run
from harness.config import Settings, SettingsError
from harness.eval.candidate import CandidateError
from harness.problems.index import ProblemError
from harness.types import Candidate, EvalResult, Problem, Status

__all__ = [
    "Candidate", "CandidateError", "Connection", "EvalResult", "Evaluator", "Problem", "ProblemError", "RunError",
    "RunRequest", "Settings", "SettingsError", "Status", "run",
]
