"""The Python API, for RL and search loops: evaluate a batch of (problem, source) pairs and get EvalResults
back, with the same isolation, integrity checks, caching and store as `harness eval`.

    from harness.api import Evaluator

    evaluator = Evaluator(target="cuda")                      # settings as for the CLI (HARNESS_* apply)
    results = evaluator.evaluate([("level1/relu", source_a), ("level1/relu", source_b)])
    results = await evaluator.aevaluate(pairs)                # from asyncio code: the same, off the event loop
    reward = results[0].speedup if results[0].counted else 0.0

Every result is stored under the evaluator's run (`harness report --run NAME` shows it), and a pair whose
problem and source were evaluated before on this device is served from the store.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Iterable, Union

from harness.config import Settings, load_settings
from harness.device import discover
from harness.eval.candidate import candidate_from_source
from harness.eval.pipeline import default_run_name, evaluate
from harness.eval.scheduler import Job
from harness.problems.index import resolve
from harness.store import Store
from harness.types import EvalResult, Problem, Target

ProblemRef = Union[str, Path, Problem]  # an id (level1/relu), a path to a problem file, or a Problem


class Evaluator:
    """Evaluates batches on this machine's device(s); one batch at a time (each batch uses every device)."""

    def __init__(self, *, target: Target | None = None, settings: Settings | None = None,
                 problems_dir: str | Path | None = None, run: str | None = None):
        self.settings = settings or load_settings()
        self.device = discover(target)
        self.problems_dir = Path(problems_dir) if problems_dir else None
        self.run = run or default_run_name("api")
        self._one_batch_at_a_time = threading.Lock()

    def evaluate(self, pairs: Iterable[tuple[ProblemRef, str]]) -> list[EvalResult]:
        """One EvalResult per (problem, source) pair, in order. Raises ProblemError for an unknown problem and
        TypeError for a source that is not a string, before anything is built."""
        jobs = [Job(self._problem(problem), candidate_from_source(self._source(source))) for problem, source in pairs]
        if not jobs:
            return []
        with self._one_batch_at_a_time, Store(self.settings.db) as store:
            recorded = evaluate(jobs, device=self.device, settings=self.settings, store=store, run=self.run,
                                kind="api")
        return [result for _, result in recorded]

    async def aevaluate(self, pairs: Iterable[tuple[ProblemRef, str]]) -> list[EvalResult]:
        """`evaluate` in a worker thread: the event loop keeps serving (e.g. model requests) meanwhile."""
        return await asyncio.to_thread(self.evaluate, list(pairs))

    def _problem(self, problem: ProblemRef) -> Problem:
        return problem if isinstance(problem, Problem) else resolve(str(problem), self.problems_dir)

    @staticmethod
    def _source(source: str) -> str:
        if not isinstance(source, str):
            raise TypeError(f"a candidate source must be a str (Python code defining ModelNew), "
                            f"not {type(source).__name__}")
        return source


def evaluate_sources(pairs: Iterable[tuple[ProblemRef, str]], **options) -> list[EvalResult]:
    """One-shot form of Evaluator(**options).evaluate(pairs)."""
    return Evaluator(**options).evaluate(pairs)


async def aevaluate_sources(pairs: Iterable[tuple[ProblemRef, str]], **options) -> list[EvalResult]:
    """One-shot form of await Evaluator(**options).aevaluate(pairs)."""
    return await Evaluator(**options).aevaluate(pairs)
