"""The store's records of runs and their conversations: what Store's rows of runs and turns are read into (and
the key a turn is written under)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from harness.completions import Completion, Usage


@dataclass(frozen=True)
class RunInfo:
    name: str
    created_at: str
    kind: str
    target: str
    device_name: str
    model: str | None
    backend: str | None  # what the prompt asked for (cuda, triton); None for runs of files (eval, api, bench)
    evaluations: int
    requests: int       # model answers used by the run (from the cache or not)
    tokens: int         # their prompt + completion tokens
    hidden: bool = False  # left out of `harness report` unless named (`harness runs --hide`)
    finished: bool = False  # a run or generate that went through every turn (store.finish_run)

    @classmethod
    def from_row(cls, row: tuple) -> RunInfo:
        """A row of Store.runs' query: the run's columns, then whether it is hidden (0 or 1) and finished."""
        (name, created_at, kind, target, device_name, model, backend, evaluations, requests, tokens, hidden,
         finished) = row
        return cls(name, created_at, kind, target, device_name, model, backend, evaluations, requests, tokens,
                   bool(hidden), bool(finished))


@dataclass(frozen=True)
class TurnKey:
    """A turn of a run's conversation: the problem, the sample, the turn."""
    run: str
    problem_id: str
    sample: int
    turn: int


@dataclass(frozen=True)
class TurnRecord:
    problem_id: str
    sample: int
    turn: int
    completion_key: str
    cached: bool
    candidate_sha256: str | None
    candidate_path: str | None
    reason: str | None
    evaluation_id: int | None
    completion: Completion
    candidate_source: str | None
    messages: tuple[dict, ...] = ()  # the request's chat messages: the conversation up to this turn's answer

    @classmethod
    def from_row(cls, row: tuple) -> TurnRecord:
        """A row of Store.turns' query: the turn's columns, its completion, its candidate's source, its request."""
        (problem_id, sample, turn, completion_key, cached, sha256, path, reason, evaluation_id, completion_json,
         source, request_json) = row
        return cls(problem_id, sample, turn, completion_key, cached, sha256, path, reason, evaluation_id,
                   Completion.model_validate_json(completion_json), source,
                   tuple(json.loads(request_json).get("messages", ())))


@dataclass(frozen=True)
class RunUsage:
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    def cost_usd(self, prices: tuple[float, float] | None) -> float | None:
        """What the answers cost at these prices (USD per million prompt / completion tokens)."""
        if not prices or not self.requests:
            return None
        return (self.prompt_tokens * prices[0] + self.completion_tokens * prices[1]) / 1e6

    def cost_label(self, prices: tuple[float, float] | None) -> str:
        return f"${self.cost_usd(prices) or 0.0:,.4f}" if prices else "-"

    def plus(self, usage: Usage, *, cached: bool) -> RunUsage:
        return RunUsage(self.requests + 1, self.cached + cached, self.prompt_tokens + usage.prompt_tokens,
                        self.completion_tokens + usage.completion_tokens,
                        self.reasoning_tokens + usage.reasoning_tokens)
