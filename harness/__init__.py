"""kernel-harness: evaluate custom kernels against PyTorch references, honestly and fast."""

from .api import Evaluator, aevaluate_sources, evaluate_sources
from .config import Settings, load_settings
from .device import discover
from .executor import Job
from .problems import ProblemError, resolve, select
from .report import leaderboard
from .runner import evaluate
from .static import candidate_from_source, load_candidate
from .store import Store
from .types import (
    BuildResult, Candidate, CheckResult, DeviceInfo, EvalResult, Problem, Status, Target, Timing,
)

__all__ = [
    "BuildResult", "Candidate", "CheckResult", "DeviceInfo", "EvalResult", "Evaluator", "Job", "Problem", "ProblemError",
    "Settings", "Status", "Store", "Target", "Timing", "aevaluate_sources", "candidate_from_source", "discover", "evaluate", "evaluate_sources",
    "leaderboard", "load_candidate", "load_settings", "resolve", "select",
]
