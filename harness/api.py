"""The Python API. For RL and search loops, evaluate a batch of (problem, source) pairs and get EvalResults
back, with the same isolation, integrity checks, caching and store as `harness eval`:

    from harness import Evaluator

    evaluator = Evaluator(target="cuda")                      # settings as for the CLI (HARNESS_* apply)
    results = evaluator.evaluate([("level1/relu", source_a), ("level1/relu", source_b)])
    results = await evaluator.aevaluate(pairs)                # from asyncio code: the same, off the event loop
    reward = results[0].speedup if results[0].counted else 0.0

Every result is stored under the evaluator's run (`harness report --run NAME` shows it), and a pair whose
problem and source were evaluated before on this device is served from the store.

The main job, `harness run` as a call (`harness run` and `harness generate` are thin shells over it):

    from harness import run
    done = run(model="my-model", base_url="http://localhost:8000/v1", problems="level1", turns=3)
    print(done.board.summary.fast_p)       # the run's leaderboard; done.outcomes has every turn

With no model, the answers are the reference solutions (solutions/reference/), as `harness run` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from harness.agent.turn_tools import TurnTools
from harness.completions import Sampling
from harness.config import Settings, load_settings
from harness.device import discover
from harness.errors import InputError
from harness.eval import confine, sanitize
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import SOLUTIONS_DIR, RunLabel, default_run_name, evaluate
from harness.llm.loop import RUN_NAME, Asking, Loop, LoopEvents, RunConfig, TurnOutcome
from harness.llm.prompts import Prompts
from harness.llm.providers import (
    PLACEHOLDER_KEY,
    OfflineProvider,
    OpenAIProvider,
    Provider,
    ProviderError,
    RetryPolicy,
    redact_url,
)
from harness.problems.index import resolve, select
from harness.problems.screen import screen
from harness.report.leaderboard import Leaderboard, run_board
from harness.store import RunUsage, Store
from harness.store_records import RunInfo
from harness.types import Backend, DeviceInfo, EvalResult, Problem, Target

T = TypeVar("T")

ProblemRef = str | Path | Problem  # an id (level1/relu), a path to a problem file, or a Problem


class Evaluator:
    """Evaluates batches on this machine's device(s); one batch at a time (each batch uses every device)."""

    def __init__(self, *, target: Target | None = None, settings: Settings | None = None,
                 problems_dir: str | Path | None = None, run: str | None = None):
        self.settings = settings or load_settings()
        self.device = discover(target)
        self.problems_dir = Path(problems_dir) if problems_dir else self.settings.problems_dir
        self.run = run or default_run_name("api")
        self._one_batch_at_a_time = threading.Lock()

    def evaluate(self, pairs: Iterable[tuple[ProblemRef, str]]) -> list[EvalResult]:
        """One EvalResult per (problem, source) pair, in order. Raises ProblemError for an unknown problem and
        TypeError for a source that is not a string, before anything is built."""
        jobs = [Job(self._problem(problem), candidate_from_source(self._source(source))) for problem, source in pairs]
        if not jobs:
            return []
        with self._one_batch_at_a_time, Store(self.settings.db) as store:
            recorded = evaluate(jobs, device=self.device, settings=self.settings, store=store,
                                run=RunLabel(self.run, "api"))
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


# ---- the main job: a run of a model (or of the reference solutions) over a problem set ----

# The problems a run takes when none are named: with a model, a set to start with; without one, the answers
# are solutions/reference/, so every set of the target that has them.
DEFAULT_SET = {"cuda": "level1", "cpu": "cpu"}
OFFLINE_SET = {"cuda": "level1,level2,level3", "cpu": "cpu"}
REFERENCE_SOLUTIONS = SOLUTIONS_DIR


class RunError(InputError, ValueError):
    """A run that cannot start as asked (a resume with nothing to resume, changed settings, no key...)."""


class RunStopped(ProviderError):
    """The model's server still failed after every retry: the run is stored, unfinished, and a resume continues
    it (`harness MODE --resume --run RUN`)."""

    def __init__(self, message: str, *, run: str, mode: str):
        super().__init__(message)
        self.run, self.mode = run, mode


@dataclass(frozen=True)
class Connection:
    """Where the model is and how hard to try; None: $OPENAI_BASE_URL / $OPENAI_API_KEY (never stored, never
    passed to candidates), else the OpenAI API."""

    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 8
    request_timeout_s: float = 600.0
    max_retries: int = 6
    use_cache: bool = True  # an identical request (model, messages, sampling, sample) answered before is reused

    def server(self) -> str | None:
        """The model server's base URL, checked before any request: RunError names where a malformed one came
        from (retrying it could only fail the same way)."""
        url, source = (self.base_url, "--base-url") if self.base_url else (os.environ.get("OPENAI_BASE_URL"),
                                                                             "OPENAI_BASE_URL")
        if url:
            try:
                parts = urlsplit(url)
                parts.port  # noqa: B018 (raises ValueError on a port that is not a number)
            except ValueError as exc:
                raise RunError(f"{source} {redact_url_loosely(url)!r} is not a URL ({exc})") from None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise RunError(f"{source} {redact_url_loosely(url)!r} is not an http(s) URL with a host; "
                               "give one like http://localhost:8000/v1")
        return url


@dataclass
class RunRequest:
    """What to run. Every field left None takes its default, or, on `resume`, the stored run's value."""

    model: str | None = None                    # None: the offline provider (the reference solutions)
    problems: str | None = None                 # selector: sets (level1, cpu), directories, ids or .py paths
    samples: int | None = None                  # conversations per problem (1)
    turns: int | None = None                    # turns per conversation (1)
    sampling: Sampling | None = None
    prompts_dir: str | None = None              # your own templates (default: prompts/)
    backend: Backend | None = None              # what the prompt asks for: cuda (load_inline, the default) or triton
    prices: tuple[float, float] | None = None   # USD per million prompt / completion tokens (updatable)
    name: str | None = None                     # the run's name (default: generated; with resume, the latest)
    resume: bool = False                        # continue a stored run with its own settings
    tools: int | None = None                    # tool calls (evaluate, profile) a turn may make before its answer


@dataclass
class RunDone:
    name: str
    config: RunConfig
    mode: Literal["run", "generate"]
    problems: list[Problem]
    too_big: list[Problem] = field(default_factory=list)   # declare more MEMORY_GB than max_memory_gb
    no_reference: list[str] = field(default_factory=list)  # offline: selected, but no reference solution
    unusable: dict[str, list[str]] = field(default_factory=dict)  # problem id -> why (problems/screen.py)
    outcomes: list[TurnOutcome] = field(default_factory=list)
    usage: RunUsage = field(default_factory=RunUsage)
    board: Leaderboard | None = None                    # None for generate (nothing evaluated)


class RunEvents(LoopEvents):
    def starting(self, done: RunDone, device: DeviceInfo) -> None:
        """The run is planned (its name, config and problems known); nothing asked yet."""


def run(request: RunRequest | None = None, *, target: Target | None = None, settings: Settings | None = None,
        connection: Connection | None = None, problems_dir: str | Path | None = None,
        max_memory_gb: float | None = None, solutions_dir: str | Path | None = None,
        mode: Literal["run", "generate"] = "run", events: RunEvents | None = None, **fields) -> RunDone:
    """Ask the model for every selected problem and sample, build, check and time each answer, feed the
    result back for `turns` turns, store every turn; the run's leaderboard comes back in `board`.
    `mode="generate"` only asks (one turn, nothing evaluated). `fields` are RunRequest's, for short calls.
    Raises RunError (and ProblemError, ProviderConfigError, SandboxUnavailable) before anything is asked, and
    RunStopped when the server still fails after every retry (the run is stored, unfinished, for `resume`)."""
    request = request or RunRequest(**fields)
    settings = settings or load_settings()
    connection = connection or Connection()
    events = events or RunEvents()
    device = discover(target)
    if mode == "run":  # generate builds and runs nothing: it needs no sandbox
        confine.require(settings)  # a machine that refuses it fails here, before anything is asked
        sanitize.require(settings.sanitize, device.target)
    if request.name and not RUN_NAME.match(request.name):
        raise RunError(f"bad run name {request.name!r}: use letters, digits, '.', '_' and '-' (it names a folder)")
    with Store(settings.db) as store:
        name, config = plan(request, device, store, mode, connection, settings.dtype)
        settings = settings.model_copy(update={"dtype": config.dtype})  # a resumed run keeps its own
        provider = provider_for(config, connection)
        selected = select(config.problems, Path(problems_dir) if problems_dir else settings.problems_dir)
        fits = [p for p in selected if max_memory_gb is None or p.memory_gb is None or p.memory_gb <= max_memory_gb]
        unusable = screen(fits, device.target, settings.results_dir / "gate")  # foreign problems only
        done = RunDone(name, config, mode, [p for p in fits if p.id not in unusable],
                       too_big=[p for p in selected if p not in fits], unusable=unusable)
        if unusable and not done.problems:
            raise RunError(f"none of the problems selected by {config.problems!r} can be used: "
                           + "; ".join(f"{pid}: {' '.join(why)}" for pid, why in unusable.items()))
        if isinstance(provider, OfflineProvider):
            done.no_reference = [p.id for p in done.problems if provider.source_path(p) is None]
            done.problems = [p for p in done.problems if provider.source_path(p) is not None]
            if not done.problems:
                raise RunError(f"none of the problems selected by {config.problems!r} has a reference solution "
                               f"in {provider.name.removeprefix('offline:')}/ (pass --model to ask a model instead)")
        events.starting(done, device)
        prompts = Prompts(device.target, Path(config.prompts_dir) if config.prompts_dir else None, config.backend)
        where = Path(solutions_dir).resolve() if solutions_dir else settings.solutions_dir
        tools = TurnTools.for_run(name, config, device, settings, problems_dir) if mode == "run" else None
        loop = Loop(run=name, asking=Asking(config, provider, prompts, connection.use_cache, tools), device=device,
                    settings=settings, store=store, solutions_dir=where, events=events)
        done.outcomes = _go_stored(loop, provider, done, store, device)
        done.usage = store.usage(name)
        if mode == "run":
            done.board = run_board(store, next(r for r in store.runs() if r.name == name), request.prices)
        return done


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, but Ctrl-C raises KeyboardInterrupt wherever the main thread is, as in synchronous code.
    asyncio.run's own handler only cancels the task at its next await, and a round's evaluation (builds and
    children, minutes of synchronous work on this thread) went on after the first Ctrl-C."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        if not task.done():  # it was waiting (on a model's answer): let its cleanup run, then stop
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        raise
    finally:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _go_stored(loop: Loop, provider: Provider, done: RunDone, store: Store, device: DeviceInfo) -> list[TurnOutcome]:
    """The run's turns, with the run stored before its first request: one whose server fails stays, unfinished,
    for a resume to continue (RunStopped names it); one refused as bad input at its start (a key, a model) leaves
    nothing behind."""
    created = store.ensure_run(done.name, kind=done.mode, target=device.target, device_name=device.name,
                               model=done.config.model, config=done.config.model_dump_json())
    try:
        outcomes = run_interruptible(_go(loop, provider, done.problems, done.mode == "run"))
    except InputError:
        if created and not store.turns(done.name):
            store.delete_run(done.name)
        raise
    except ProviderError as exc:  # after every retry: what finished is stored
        raise RunStopped(str(exc), run=done.name, mode=done.mode) from exc
    store.finish_run(done.name)
    return outcomes


async def _go(loop: Loop, provider: Provider, problems: list[Problem], evaluate_turns: bool) -> list[TurnOutcome]:
    try:
        return await loop.go(problems, evaluate_turns=evaluate_turns)
    finally:
        await provider.close()


# What shapes a run's answers: stored with it, and taken from it on resume (prices change no answer).
GENERATION_FIELDS = ("model", "problems", "samples", "turns", "sampling", "prompts_dir", "backend", "tools")


def plan(request: RunRequest, device: DeviceInfo, store: Store, mode: str, connection: Connection,
         dtype: str = "float32") -> tuple[str, RunConfig]:
    """The run's name and config: from the request, or from the stored run on resume."""
    if request.resume:
        name, config = _resumed(request, device, store, mode)
    else:
        name, config = _new(request, device, store, mode, connection)
        config = config.model_copy(update={"dtype": dtype})
        _same_as_stored(name, config, store)
    if request.prices is not None:
        config = config.model_copy(update={"price_in": request.prices[0], "price_out": request.prices[1]})
    return name, config


def _resumed(request: RunRequest, device: DeviceInfo, store: Store, mode: str) -> tuple[str, RunConfig]:
    given = [f for f in GENERATION_FIELDS if getattr(request, f) is not None]
    if given:
        raise RunError(f"resume continues a run with its own settings; drop {', '.join(given)} "
                       "(or start a new run with another name)")
    runs = [r for r in store.runs() if r.kind == mode]
    # Without a name: the latest run that did not go through every turn (stopped, or its server failed); a
    # finished one has nothing left to do, and re-timing it quietly would pass for the resume asked for.
    name = request.name or next((r.name for r in reversed(runs) if not r.finished), None)
    stored = store.run_config(name) if name else None
    if not (name and stored):
        raise RunError(_nothing_to_resume(request.name, runs, store.path, mode))
    config = RunConfig.model_validate_json(stored)
    if config.target != device.target:
        raise RunError(f"run {name!r} is on the {config.target} target, but the device gives {device.target}")
    return name, config


def _nothing_to_resume(name: str | None, runs: list[RunInfo], db: Path, mode: str) -> str:
    """Why there is nothing to resume, and the command to type instead."""
    unfinished = [r.name for r in runs if not r.finished]
    others = (f"; unfinished here: {', '.join(unfinished)} (`harness {mode} --resume --run {unfinished[-1]}`)"
              if unfinished else "")
    if name:
        return (f"nothing to resume: nothing of run {name!r} is stored in {db} (a run is kept from its start, "
                "unless refused as bad input before its first answer; or it ran with other --results-dir), so "
                f"start it: `harness {mode} --run {name} --model MODEL` with the options you first gave, without "
                f"--resume{others}")
    if runs:
        return (f"nothing to resume: every `harness {mode}` run in {db} went through all its turns (the latest: "
                f"{runs[-1].name}; `harness runs` lists them); start a new one: `harness {mode} --model MODEL`")
    return (f"nothing to resume: {db} has no `harness {mode}` run; start one: `harness {mode} --model MODEL` "
            f"(or `harness {mode}` alone for the reference solutions)")


def _new(request: RunRequest, device: DeviceInfo, store: Store, mode: str, connection: Connection
         ) -> tuple[str, RunConfig]:
    base_url = connection.server() if request.model else None
    backend = request.backend or "cuda"
    config = RunConfig(
        model=request.model or OfflineProvider.NAMES[backend], base_url=redact_url(base_url), target=device.target,
        backend=backend,
        problems=request.problems or (DEFAULT_SET if request.model else OFFLINE_SET)[device.target],
        samples=request.samples or 1, turns=request.turns or 1, sampling=request.sampling or Sampling(),
        prompts_dir=str(Path(request.prompts_dir).resolve()) if request.prompts_dir else None,
        tool_calls=request.tools or 0)
    if config.tool_calls and not request.model:
        raise RunError("--tools needs --model: the reference solutions call no tools")
    offline_name = "reference" + ("-triton" if backend == "triton" else "") + f"-{device.target}"
    return request.name or default_run_name(mode if request.model else offline_name), config


def _same_as_stored(name: str, config: RunConfig, store: Store) -> None:
    """A run named again (not resumed) must ask and evaluate as it did."""
    stored = store.run_config(name)
    if stored:
        before = RunConfig.model_validate_json(stored)
        fixed = ("model", "base_url", "target", "backend", "sampling", "prompts_dir", "dtype", "tool_calls")
        changed = [f for f in fixed if getattr(before, f) != getattr(config, f)]
        if changed:
            raise RunError(f"run {name!r} was made with other settings ({', '.join(changed)}: "
                           f"{', '.join(repr(getattr(before, f)) for f in changed)}); continue it with "
                           "resume, or pick a new run name")


def redact_url_loosely(url: str) -> str:
    """A malformed URL as it can be shown: anything before an @ (credentials) cut."""
    return url.rsplit("@", 1)[-1] if "@" in url else url


def provider_for(config: RunConfig, connection: Connection) -> Provider:
    if config.model in OfflineProvider.NAMES.values():
        return OfflineProvider(REFERENCE_SOLUTIONS, config.backend)
    # The stored base URL has credentials removed: take the real one from the connection or environment.
    base_url = connection.server() or config.base_url
    key = connection.api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if not base_url or "api.openai.com" in base_url:
            raise RunError("OPENAI_API_KEY is not set; export it, or pass --base-url for a local server "
                           "that needs no key")
        key = PLACEHOLDER_KEY
    return OpenAIProvider(config.model, base_url=base_url, api_key=key, concurrency=connection.concurrency,
                          timeout_s=connection.request_timeout_s,
                          retry=RetryPolicy(max_retries=connection.max_retries))
