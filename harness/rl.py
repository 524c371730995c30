"""What an RL loop needs from the harness: the prompt `harness run` sends, the code in a completion, and a reward.

    from harness.rl import GRPOReward, render_prompt
    messages = render_prompt("level1/relu")                 # turn 1, as `harness run` sends it on this machine
    reward = GRPOReward()                                   # TRL: GRPOTrainer(reward_funcs=[reward], ...)
    reward(completions=["```python\\n...ModelNew...\\n```"], problem=["level1/relu"])  # -> [1.5]

Rewards come from `Evaluator` (builds cached, results stored, every child sandboxed), shaped by `Shaping`:

  nothing usable (no code, rejected, compile error)   0.0
  built, but wrong, crashed or timed out              Shaping.built (0.1)
  correct                                             Shaping.correct (1.0)
  + its speed, where it counts                        Shaping.per_doubling x log2(speedup), within [-1, 3]
  the harness failed, or the machine was contended    None: no verdict on the candidate (TRL skips it)

A correct result with a flag that makes its speed untrustworthy (flags.EXCLUDING: faster than light,
reference slowed, timing disputed, hidden work...) earns no speed term; one flagged as gaming the timing earns
Shaping.built only, so an exploit never pays more than an honest wrong answer.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.api import Evaluator, ProblemRef
from harness.device import discover
from harness.facts import gather
from harness.flags import (
    CONTENDED,
    EXCLUDING,
    FASTER_THAN_LIGHT,
    HIDDEN_WORK,
    IMPLAUSIBLE_SPEEDUP,
    REFERENCE_SLOWED,
    TIMING_DISPUTED,
)
from harness.llm.extract import Extraction, extract
from harness.llm.prompts import Prompts
from harness.problems.index import resolve
from harness.types import HARNESS_ERROR, Backend, EvalResult, Problem, Target

__all__ = ["Extraction", "GRPOReward", "Shaping", "extract", "render_prompt", "verl_batch_score", "verl_score"]

# Flags that say the candidate itself bent the measurement (not the machine, not the problem).
GAMING_FLAGS = frozenset({IMPLAUSIBLE_SPEEDUP, FASTER_THAN_LIGHT, REFERENCE_SLOWED, HIDDEN_WORK, TIMING_DISPUTED})
# Flags that say nothing was measured about the candidate: the machine's doing, not the candidate's.
MACHINE_FLAGS = frozenset({CONTENDED})


def render_prompt(problem: ProblemRef, *, target: Target | None = None, backend: Backend = "cuda",
                  dtype: str = "float32", prompts_dir: str | Path | None = None,
                  problems_dir: str | Path | None = None) -> list[dict]:
    """The chat messages (system, then the first user turn) `harness run` sends for this problem, with this
    machine's device facts (the target's: a GPU's, or the CPU's), evaluated in `dtype`."""
    device = discover(target)
    found = problem if isinstance(problem, Problem) else resolve(str(problem), Path(problems_dir) if problems_dir
                                                                 else None)
    return Prompts(device.target, Path(prompts_dir) if prompts_dir else None, backend).first_messages(
        found, gather(device), dtype)


@dataclass(frozen=True)
class Shaping:
    built: float = 0.1          # extracted and built, but incorrect, crashed or timed out
    correct: float = 1.0        # correct
    per_doubling: float = 0.5   # per doubling of the speedup over eager, where the speed counts
    min_log2: float = -1.0      # a correct kernel at half eager's speed or slower: correct - 0.5
    max_log2: float = 3.0       # 8x and above: correct + 1.5

    def reward(self, result: EvalResult | None) -> float | None:
        """The reward for one result (None: no code was extracted, as `no_code`)."""
        if result is None or result.status in ("no_code", "rejected", "compile_error"):
            return 0.0
        if result.status == HARNESS_ERROR or MACHINE_FLAGS & set(result.flags):
            return None
        if result.status != "correct":
            return self.built
        if GAMING_FLAGS & set(result.flags):
            return self.built
        if EXCLUDING & set(result.flags) or not result.speedup:
            return self.correct
        doublings = min(self.max_log2, max(self.min_log2, math.log2(result.speedup)))
        return self.correct + self.per_doubling * doublings


def completion_text(completion) -> str:
    """TRL passes a completion as text, or (conversational datasets) as a list of messages."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content") or "" for m in completion if m.get("role", "assistant") == "assistant")


class GRPOReward:
    """A reward function in the shape TRL's GRPOTrainer calls (`reward_funcs=[GRPOReward()]`): completions in,
    one float (or None) each out; the dataset's `problem` column (a problem id or path per row) arrives as a
    keyword argument. One batch of evaluations per call, through one Evaluator (builds and results cached)."""

    __name__ = "kernel_reward"  # TRL logs each reward function under its __name__

    def __init__(self, evaluator: Evaluator | None = None, *, shaping: Shaping = Shaping(),
                 problem_column: str = "problem"):
        self._evaluator, self.shaping, self.problem_column = evaluator, shaping, problem_column
        self._lock = threading.Lock()
        self.last_results: list[EvalResult | None] = []  # the last call's, in order (None: no code in it)

    @property
    def evaluator(self) -> Evaluator:
        with self._lock:
            if self._evaluator is None:
                self._evaluator = Evaluator(run="rl")
            return self._evaluator

    def __call__(self, prompts=None, completions: Sequence = (), **columns) -> list[float | None]:
        problems = columns.get(self.problem_column)
        if problems is None or len(problems) != len(completions):
            raise ValueError(f"GRPOReward needs a {self.problem_column!r} column with one problem per completion "
                             f"(got {0 if problems is None else len(problems)} for {len(completions)} completions)")
        self.last_results = evaluate_texts(self.evaluator, problems, [completion_text(c) for c in completions])
        return [self.shaping.reward(r) for r in self.last_results]


def evaluate_texts(evaluator: Evaluator, problems: Sequence[ProblemRef], texts: Sequence[str]
                   ) -> list[EvalResult | None]:
    """Extract each completion's code and evaluate those that have some, as one batch; None where none."""
    sources = [extract(text).source for text in texts]
    wanted = [(p, s) for p, s in zip(problems, sources) if s is not None]
    results = iter(evaluator.evaluate(wanted)) if wanted else iter(())
    return [next(results) if s is not None else None for s in sources]


_shared = GRPOReward()


def verl_score(data_source, solution_str: str, ground_truth, extra_info=None, **_) -> dict:
    """verl's per-sample `compute_score` (reward_model.reward_manager=naive, custom_reward_function.path=this
    file, .name=verl_score): `ground_truth` is the problem id. verl needs a number: a harness fault or a contended
    machine scores 0 with measured=0, for masking."""
    return verl_batch_score([data_source], [solution_str], [ground_truth], [extra_info])[0]


def verl_batch_score(data_sources, solution_strs, ground_truths, extra_infos=None, **_) -> list[dict]:
    """verl's batch `compute_score` (reward_manager=batch, .name=verl_batch_score): one dict per sample, `score`
    first, with `correct`, `speedup` and `measured` beside it for verl's metrics."""
    results = _shared.last_results = evaluate_texts(_shared.evaluator, list(ground_truths), list(solution_strs))
    scores = []
    for result in results:
        reward = _shared.shaping.reward(result)
        scores.append({"score": 0.0 if reward is None else reward, "measured": float(reward is not None),
                       "correct": float(bool(result and result.status == "correct")),
                       "speedup": float(result.speedup or 0.0) if result else 0.0})
    return scores
