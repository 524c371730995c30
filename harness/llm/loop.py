"""The LLM loop: prompt -> completion -> candidate -> evaluation -> feedback, turn after turn.

Each (problem, sample) is a conversation. Turns advance in rounds: every conversation gets its turn-k
answer (concurrently, up to the provider's limit), then all turn-k candidates are built in parallel
and evaluated one at a time, then each conversation gets its feedback. Everything is stored as soon
as it exists, so a rerun of the same run replays stored turns and only asks for what is missing;
a separate response cache means an identical request is never paid twice, whatever the run.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from harness.completions import Completion, CompletionRequest, Sampling
from harness.config import Settings
from harness.eval.candidate import candidate_from_source
from harness.eval.context import contexts_for
from harness.eval.evaluation import Job, result_for
from harness.eval.phases import Events, Phase, PhaseTook
from harness.eval.pipeline import RunLabel, display_path, evaluate
from harness.facts import gather
from harness.llm.extract import extract, strip_thinking
from harness.llm.prompts import Prompts
from harness.llm.providers import Provider
from harness.llm.tool_exchange import ToolSet
from harness.process import write_atomic
from harness.store import Store, TurnKey
from harness.types import (
    HARNESS_ERROR,
    Backend,
    BuildResult,
    Candidate,
    DeviceInfo,
    EvalResult,
    Frozen,
    Problem,
    Target,
)

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class RunConfig(Frozen):
    """How a run generates; stored with the run so `--resume` continues it the same way."""

    model: str = Field(description="Model name, or the offline provider's name")
    base_url: str | None = Field(default=None, description="Server URL, credentials removed; None for offline")
    target: Target = Field(description="cuda or cpu")
    backend: Backend = Field(default="cuda", description="What the prompt asks for: cuda (load_inline; C++ on the "
                                                         "cpu target) or triton")
    problems: str = Field(description="The problem selector")
    samples: int = Field(default=1, ge=1, description="Conversations per problem")
    turns: int = Field(default=1, ge=1, description="Turns per conversation")
    sampling: Sampling = Field(default_factory=Sampling, description="Sampling parameters")
    prompts_dir: str | None = Field(default=None, description="Prompt templates; None for the built-in ones")
    dtype: str = Field(default="float32", description="Evaluation dtype: the prompt says it, every turn uses it")
    price_in: float | None = Field(default=None, description="USD per million prompt tokens, for the cost")
    price_out: float | None = Field(default=None, description="USD per million completion tokens")
    tool_calls: int = Field(default=0, ge=0, description="Tool calls (evaluate) a turn may make before its answer; "
                            "0: none offered")

    @property
    def prices(self) -> tuple[float, float] | None:
        """USD per million prompt and completion tokens, where the run has them (they are set together)."""
        return None if self.price_in is None or self.price_out is None else (self.price_in, self.price_out)


class LoopEvents(Events):
    def requesting(self, turn: int, count: int) -> None: ...
    def answered(self, completion: Completion) -> None: ...
    def conversation_done(self, problem_id: str) -> None: ...


class EndingEvents(Events):
    """A round's events, passed on, with each conversation said done as the result that ends it comes: every result
    of the last round, and a harness error in any (that conversation waits for the next run of its name)."""

    def __init__(self, events: LoopEvents, last: bool) -> None:
        self.events, self.last = events, last

    def phase(self, phase: Phase) -> None:
        self.events.phase(phase)

    def phase_done(self, phase: Phase, took: PhaseTook) -> None:
        self.events.phase_done(phase, took)

    def planned(self, builds: int, evaluations: int) -> None:
        self.events.planned(builds, evaluations)

    def built(self, candidate: Candidate, build: BuildResult) -> None:
        self.events.built(candidate, build)

    def evaluated(self, result: EvalResult) -> None:
        self.events.evaluated(result)
        if self.last or result.status == HARNESS_ERROR:
            self.events.conversation_done(result.problem_id)


@dataclass
class Conversation:
    problem: Problem
    sample: int
    messages: list[dict[str, str]]  # grows by an answer and a feedback turn per round


@dataclass(frozen=True)
class TurnOutcome:
    """One turn of one conversation, as `harness generate --json` reports it."""

    problem: Problem
    sample: int
    turn: int
    candidate: Candidate | None
    reason: str | None
    completion: Completion
    evaluation_id: int | None

    def summary(self) -> dict:
        return {"problem": self.problem.id, "sample": self.sample, "turn": self.turn,
                "status": "generated" if self.candidate else "no_code",
                "candidate": self.candidate.path if self.candidate else None, "reason": self.reason,
                "finish_reason": self.completion.finish_reason, "cached": self.completion.cached,
                "prompt_tokens": self.completion.usage.prompt_tokens,
                "completion_tokens": self.completion.usage.completion_tokens,
                "tool_calls": len(self.completion.tool_steps), "tool_s": round(self.completion.tool_s, 3)}


@dataclass(frozen=True)
class Asking:
    """How a run asks the model: its config, the provider, the prompts, and whether the response cache serves."""

    config: RunConfig
    provider: Provider
    prompts: Prompts
    use_cache: bool = True
    tools: ToolSet | None = None  # what a turn may call before it answers, config.tool_calls times


class Loop:
    """A run's conversations, turn after turn; the run's row is in the store already (api.run writes it before
    the first request, so a run whose server fails can be resumed)."""

    def __init__(self, *, run: str, asking: Asking, device: DeviceInfo, settings: Settings, store: Store,
                 solutions_dir: Path, events: LoopEvents | None = None):
        self.run, self.device, self.settings, self.store = run, device, settings, store
        self.config, self.provider, self.prompts, self.use_cache = (asking.config, asking.provider, asking.prompts,
                                                                    asking.use_cache)
        self.tools = asking.tools if self.config.tool_calls else None
        self.facts = gather(device)  # what the prompts say of the target
        self.solutions_dir = solutions_dir
        self.events = events or LoopEvents()
        self.stored = store.turns(run)  # what an earlier invocation of this run already did

    async def go(self, problems: list[Problem], *, evaluate_turns: bool = True) -> list[TurnOutcome]:
        """Every conversation through every turn (only the first, without evaluation, if not evaluate_turns)."""
        conversations = [Conversation(p, s, self.prompts.first_messages(p, self.facts, self.config.dtype,
                                                                            self.settings.check_spec))
                         for p in problems for s in range(1, self.config.samples + 1)]
        turns = self.config.turns if evaluate_turns else 1
        outcomes: list[TurnOutcome] = []
        for turn in range(1, turns + 1):
            if not conversations:
                break
            self.events.requesting(turn, len(conversations))
            round_ = await asyncio.gather(*(self._answer(c, turn) for c in conversations))
            outcomes.extend(round_)
            if not evaluate_turns:
                break
            results = self._evaluate(round_, last=turn == turns)
            contexts = contexts_for(self.store, results)
            going_on = []
            for conversation, outcome, result in zip(conversations, round_, results):
                if result.status == HARNESS_ERROR:
                    # No verdict, so no feedback: the conversation waits here for the next run of this
                    # name, which evaluates this turn's answer again (and keeps that evaluation instead).
                    continue
                reply = strip_thinking(outcome.completion.text).strip() or "(empty answer)"
                sol = contexts[result.problem_sha256].sol_fraction(result.runtime_ms)
                conversation.messages += [{"role": "assistant", "content": reply},
                                          self.prompts.feedback(result, turns_left=turns - turn, sol_fraction=sol)]
                going_on.append(conversation)
            conversations = going_on
        return outcomes

    async def _answer(self, conversation: Conversation, turn: int) -> TurnOutcome:
        """This turn's answer: replayed from the run, served from the cache, or asked for."""
        problem, sample = conversation.problem, conversation.sample
        tools = tuple(schema["function"]["name"] for schema in self.tools.schemas()) if self.tools else ()
        request = CompletionRequest(model=self.config.model, messages=tuple(conversation.messages),
                                    sampling=self.config.sampling, sample=sample, tools=tools,
                                    tool_calls=self.config.tool_calls if tools else 0)
        stored = self.stored.get((problem.id, sample, turn))
        if stored and stored.completion_key == request.key:
            candidate = (candidate_from_source(stored.candidate_source, stored.candidate_path)
                         if stored.candidate_source is not None else None)
            completion = stored.completion.model_copy(update={"cached": stored.cached})
            self.events.answered(completion)
            return TurnOutcome(problem, sample, turn, candidate, stored.reason, completion, stored.evaluation_id)

        cached = self.store.completion(request.key) if self.use_cache and self.provider.cacheable else None
        if cached is not None:
            completion = cached.model_copy(update={"cached": True})
        else:
            completion = await self.provider.complete(request, problem, self.tools)
            self.store.add_completion(request, completion)  # a cacheable provider's answers serve as the cache
        source: str | None
        reason: str | None
        if completion.error:
            source, reason = None, f"the server refused the request: {completion.error}"
        else:
            extraction = extract(completion.text, completion.finish_reason)
            source, reason = extraction.source, extraction.reason
        candidate = None
        if source is not None:
            on_disk = self.provider.source_path(problem)  # the offline answers are files already: no copies
            if on_disk and on_disk.read_text() == source:
                candidate = candidate_from_source(source, display_path(on_disk))
            else:
                candidate = self._write_candidate(problem, sample, turn, source)
        self.store.add_turn(TurnKey(self.run, problem.id, sample, turn), completion_key=request.key,
                            cached=completion.cached, candidate=candidate, reason=reason)
        self.events.answered(completion)
        return TurnOutcome(problem, sample, turn, candidate, reason, completion, None)

    def _write_candidate(self, problem: Problem, sample: int, turn: int, source: str) -> Candidate:
        folder = Path(problem.id).stem if problem.id.endswith(".py") else problem.id  # given by path: its name
        path = self.solutions_dir / self.run / folder / f"sample{sample}_turn{turn}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, source)
        return candidate_from_source(source, display_path(path))

    def _evaluate(self, round_: list[TurnOutcome], last: bool) -> list[EvalResult]:
        """Results for a round: stored ones reloaded, candidates evaluated, no_code recorded as such. Each
        conversation that a result ends (in the `last` round, or with a harness error) is said done as its result
        comes, not after the round."""
        results: dict[int, EvalResult] = {}
        events = EndingEvents(self.events, last)
        todo: list[tuple[int, Job]] = []
        for i, outcome in enumerate(round_):
            turn = TurnKey(self.run, outcome.problem.id, outcome.sample, outcome.turn)
            stored = self.store.evaluation(outcome.evaluation_id) if outcome.evaluation_id is not None else None
            if stored is not None and stored.status != HARNESS_ERROR:  # a harness error is evaluated again
                results[i] = stored
                events.evaluated(stored)
            elif outcome.candidate is None:
                problem = outcome.problem
                result = result_for(Job(problem, candidate_from_source("")), self.device, self.settings,
                                    status="no_code", error=outcome.reason)
                self.store.add(self.run, result, candidate_source="", problem_source=problem.source,
                               turn=turn)
                results[i] = result
                events.evaluated(result)
            else:
                todo.append((i, Job(outcome.problem, outcome.candidate, turn=turn)))
        # each result is stored with its turn as it comes: a run killed mid-round resumes from the next one
        recorded = evaluate([job for _, job in todo], device=self.device, settings=self.settings, store=self.store,
                            run=RunLabel(self.run, "run", self.config.model), events=events)
        for (i, _), (_, result) in zip(todo, recorded):
            results[i] = result
        return [results[i] for i in range(len(round_))]
