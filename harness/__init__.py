"""kernel-harness: evaluate custom kernels against PyTorch references, honestly and fast.

The vocabulary: `Evaluator` (batches of (problem, source) pairs, for RL and search loops), `run` (the main job,
`harness run` as a call) with `RunRequest` and `Connection`, `Settings`, and what comes back: `EvalResult` with
its `Status`, for a `Problem` and a `Candidate`. Bad input raises one of the errors, before anything runs.
"""

from importlib import import_module

# Each name is imported from its module at first use: every child process (`python -m harness.child`) and every
# command imports this package first, and the API's own imports (the model client's alone take ~2 s of CPU) belong
# to the code that uses them.
_DEFINED_IN = {
    "Connection": "harness.api", "Evaluator": "harness.api", "RunError": "harness.api", "RunRequest": "harness.api",
    "run": "harness.api", "Settings": "harness.config", "SettingsError": "harness.config",
    "CandidateError": "harness.eval.candidate", "ProblemError": "harness.problems.index",
    "Candidate": "harness.types", "EvalResult": "harness.types", "Problem": "harness.types", "Status": "harness.types",
}
__all__ = sorted(_DEFINED_IN)


def __getattr__(name: str):
    if name not in _DEFINED_IN:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(import_module(_DEFINED_IN[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_DEFINED_IN})
