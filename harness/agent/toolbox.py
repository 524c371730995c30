"""The tools an agent calls, apart from any protocol: list the problems, show one as the model would be asked it,
evaluate a source, profile one, run compute-sanitizer over one (on a GPU). Each answer is a JSON-able dict with the
budget left; a call that cannot be served raises ToolError with words the agent can act on. Only the problems of the
served set can be named, by id: a path would let the agent have its own file run as the trusted reference."""

from __future__ import annotations

import difflib
import functools
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.agent.budget import Budget, ToolError
from harness.agent.profile import profile_record
from harness.config import Settings
from harness.device import discover, visible_gpus
from harness.errors import InputError
from harness.eval import counters, sanitize
from harness.eval.candidate import candidate_from_source, precheck
from harness.eval.context import ProblemContext, contexts_for
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, default_run_name, evaluate
from harness.facts import gather
from harness.llm.prompts import Prompts
from harness.problems.index import index
from harness.store import Store
from harness.types import HARNESS_ERROR, Backend, DeviceInfo, EvalResult, Problem, Target

SOURCE_LIMIT = 1 << 20  # a candidate file is a few kilobytes; a megabyte is not one


@dataclass(frozen=True)
class Serving:
    """What a toolbox serves: the target, the problems directory, the prompts and the run its evaluations go to."""

    target: Target | None = None  # None: cuda if a GPU is visible, else cpu
    problems_dir: Path | None = None  # None: the settings' (problems/)
    prompts_dir: Path | None = None
    backend: Backend = "cuda"
    run: str | None = None  # None: a new dated name, KIND-YYYYmmdd-HHMMSS
    kind: str = "mcp"  # what the run is stored as: mcp, or tools for the calls of a run's turns
    hidden: bool = False  # left out of `harness report` unless named (a run's tool calls beside its answers)


class Toolbox:
    def __init__(self, serving: Serving, settings: Settings, budget: Budget):
        self.settings, self.budget, self.serving = settings, budget, serving
        self.target: Target = serving.target or ("cuda" if visible_gpus() else "cpu")
        self.problems_dir = serving.problems_dir or settings.problems_dir
        self.prompts = Prompts(self.target, serving.prompts_dir, serving.backend)
        self.run, self.kind = serving.run or default_run_name(serving.kind), serving.kind
        self._device: DeviceInfo | None = None
        self._one_at_a_time = threading.Lock()  # an evaluation uses every device

    @functools.cached_property
    def problems(self) -> dict[str, Problem]:
        """The served problems by id, indexed at the first tool that names or lists one (a run's turns give their
        problem as such and never need them)."""
        found, _malformed = index(self.problems_dir)
        return {p.id: p for p in found if p.target == self.target}

    # ---- the tools ----

    def list_problems(self, problems: str = "") -> dict:
        """The served problems, or those a selector names (comma-separated ids or sets: level1, cpu/relu)."""
        chosen = self._select(problems) if problems.strip() else list(self.problems.values())
        return {"target": self.target, "problems": [listing(p) for p in chosen], "budget": self.budget.record()}

    def show_problem(self, problem: str) -> dict:
        """The prompt a model is asked with for this problem, and its public workloads (held-out ones are counted)."""
        chosen = self._problem(problem)
        messages = self.prompts.first_messages(chosen, gather(self.device()), self.settings.dtype,
                                               self.settings.check_spec)
        return {"problem": chosen.id, "messages": messages,
                "public_workloads": [w.shown() | {"workload": w.name, "about": w.about}
                                     for w in chosen.workloads if w.public],
                "held_out_workloads": sum(w.held_out for w in chosen.workloads),
                "budget": self.budget.record()}

    def evaluate(self, problem: str, source: str) -> dict:
        """Build, check and time `source` on the problem, as `harness eval` does: its verdict record and the feedback
        the loop would send."""
        return self.evaluate_problem(self._problem(problem), source, self.budget)

    def evaluate_problem(self, problem: Problem, source: str, budget: Budget) -> dict:
        """`evaluate` on a problem given as such (a run's, which may be a file outside the served set), spending
        `budget`."""
        result, context = self._evaluated(problem, source, budget)
        left = budget.calls_left()
        feedback = self.prompts.feedback(result, turns_left=0 if left is None else left,
                                         sol_fraction=context.sol_fraction(result.runtime_ms))
        return {"verdict": agent_record(context.record(result), result), "feedback": feedback["content"],
                "run": self.run, "budget": budget.record()}

    def profile(self, problem: str, source: str) -> dict:
        """Where a candidate's time goes: its kernels and PyTorch's operators with their times and shares in one
        profiled forward, the rate it reaches against the speed of light, and on a GPU with ncu its counters per kernel
        (profile.py)."""
        return self.profile_problem(self._problem(problem), source, self.budget)

    def profile_problem(self, problem: Problem, source: str, budget: Budget) -> dict:
        # on a GPU with ncu, its counters too: read once, then stored with the evaluation
        ncu = counters.available(self.device().target)
        result, context = self._evaluated(problem, source, budget, self.settings.model_copy(update={"counters": ncu}))
        return {**profile_record(result, context), "run": self.run, "budget": budget.record()}

    def sanitize(self, problem: str, source: str, tool: str = "memcheck") -> dict:
        """compute-sanitizer's `tool` (memcheck or racecheck) over one checked call of `source` on the problem, on a
        GPU: its findings, and the verdict they make (an access out of bounds is a runtime_error)."""
        return self.sanitize_problem(self._problem(problem), source, self.budget, tool)

    def sanitize_problem(self, problem: Problem, source: str, budget: Budget, tool: str = "memcheck") -> dict:
        try:
            sanitize.require(tool, self.device().target)
        except InputError as exc:
            raise ToolError(f"sanitize cannot run here: {exc}") from None
        result, context = self._evaluated(problem, source, budget, self.settings.model_copy(update={"sanitize": tool}))
        # the verdict's `sanitizer` holds the findings (None where the candidate never ran: nothing to sanitize)
        return {"verdict": agent_record(context.record(result), result), "run": self.run, "budget": budget.record()}

    # ---- what the tools share ----

    def device(self) -> DeviceInfo:
        if self._device is None:
            try:
                self._device = discover(self.target)
            except InputError as exc:
                raise ToolError(f"this server cannot evaluate: {exc}") from None
        return self._device

    def _evaluated(self, problem: Problem, source: str, budget: Budget,
                   settings: Settings | None = None) -> tuple[EvalResult, ProblemContext]:
        """The candidate evaluated as `harness eval` does (served from the store if it was before), and what its
        problem is compared against; `settings`: the toolbox's, but where a tool asks for more (the sanitizer, ncu)."""
        candidate = candidate_from_source(self._source(source))
        device = self.device()
        settings = settings or self.settings
        with budget.spending(), self._one_at_a_time, Store(settings.db) as store:
            ((_, result),) = evaluate([Job(problem, candidate)], device=device, settings=settings, store=store,
                                      run=RunLabel(self.run, self.kind))
            context = contexts_for(store, [result])[result.problem_sha256]
            if self.serving.hidden:
                store.set_hidden(self.run, True)
        if result.status == HARNESS_ERROR:
            raise ToolError(f"the harness or the machine failed, not your candidate ({result.error}); nothing was "
                            "stored: call again")
        return result, context

    def _problem(self, name: str) -> Problem:
        if not isinstance(name, str) or name not in self.problems:
            close = difflib.get_close_matches(str(name), list(self.problems), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else "; list_problems gives the ids"
            raise ToolError(f"unknown problem {name!r} on the {self.target} target{hint}")
        return self.problems[name]

    def _select(self, selector: str) -> list[Problem]:
        chosen: dict[str, Problem] = {}
        for item in (s.strip().strip("/") for s in selector.split(",")):
            matched = [p for i, p in self.problems.items() if item and (i == item or i.startswith(item + "/"))]
            if item and not matched:
                raise ToolError(f"no problem on the {self.target} target is or is under {item!r}; "
                                "list_problems with no selector lists them all")
            chosen.update((p.id, p) for p in matched)
        return list(chosen.values())

    @staticmethod
    def _source(source: str) -> str:
        if not isinstance(source, str) or not source.strip():
            raise ToolError("source is empty: send the complete Python file that defines ModelNew")
        if len(source.encode()) > SOURCE_LIMIT:
            raise ToolError(f"source is {len(source.encode()):,} bytes, over the {SOURCE_LIMIT:,} a candidate may be")
        verdict = precheck(source)
        if verdict is not None and verdict[0] == "no_code":
            raise ToolError(f"{verdict[1]}: send the complete Python file, not a fragment")
        return source


def listing(problem: Problem) -> dict:
    return {"problem": problem.id, "level": problem.level, "description": problem.description,
            "tags": list(problem.tags), "training": problem.training,
            "public_workloads": sum(w.public for w in problem.workloads),
            "held_out_workloads": sum(w.held_out for w in problem.workloads)}


HELD_OUT_KEEPS = ("about", "public", "timed", "status")  # what a held-out workload's record may tell an agent


def agent_record(record: dict, result: EvalResult) -> dict:
    """`harness eval --json`'s record with a held-out workload's name, values and message left out (its status and
    `about` stay, as feedback says them); the candidate has no path."""
    workloads = [entry if workload.public else {key: entry[key] for key in HELD_OUT_KEEPS}
                 for entry, workload in zip(record["workloads"], result.workloads)]
    return {key: value for key, value in record.items() if key != "candidate"} | {"workloads": workloads}
