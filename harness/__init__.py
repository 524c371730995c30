"""kernel-harness: evaluate custom kernels against PyTorch references, honestly and fast."""

from harness.api import Evaluator, aevaluate_sources, evaluate_sources
from harness.config import Settings, load_settings
from harness.device import discover
from harness.eval.candidate import candidate_from_source, load_candidate
from harness.eval.pipeline import evaluate
from harness.eval.scheduler import Job
from harness.problems.index import ProblemError, resolve, select
from harness.report.leaderboard import leaderboard
from harness.store import Store
from harness.types import (
    BuildResult,
    Candidate,
    CheckResult,
    DeviceInfo,
    EvalResult,
    Problem,
    Status,
    Target,
    Timing,
)

__all__ = [
    "BuildResult", "Candidate", "CheckResult", "DeviceInfo", "EvalResult", "Evaluator", "Job", "Problem", "ProblemError",
    "Settings", "Status", "Store", "Target", "Timing", "aevaluate_sources", "candidate_from_source", "discover", "evaluate", "evaluate_sources",
    "leaderboard", "load_candidate", "load_settings", "resolve", "select",
]
