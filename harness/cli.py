"""The `harness` command."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import sys
import time
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

from . import problems as problem_index
from .config import load_settings
from . import gate
from .device import DeviceError, discover, visible_gpus
from .isolation import write_atomic
from .build import log_excerpt
from .problems import ProblemError
from .report import STATUS_STYLE, leaderboard, render
from .facts import FactsError, gather
from .llm import (PLACEHOLDER_KEY, OfflineProvider, OpenAIProvider, ProviderConfigError, ProviderError,
                  RetryPolicy, redact_url)
from .loop import RUN_NAME, Loop, LoopEvents, RunConfig
from .prompts import PromptError, Prompts
from .runner import SOLUTIONS_DIR, Events, candidate_jobs, default_run_name, evaluate
from .static import CandidateError
from .store import RunUsage, Store, StoreError
from .types import TARGETS, BuildResult, Candidate, Completion, EvalResult, GateResult, Sampling

DEFAULT_SET = {"cuda": "level1", "cpu": "cpu"}
out = Console()
err = Console(stderr=True)


class UsageError(Exception):
    """Bad input from the user: reported in one message, exit status 2."""


# ---- progress ----

class ConsoleEvents(Events):
    """A progress bar on a terminal; one line per finished evaluation everywhere (on stderr)."""

    def __init__(self) -> None:
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal)
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> ConsoleEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def _task(self, name: str, total: int | None, description: str | None = None) -> None:
        """Create the bar, or restart it (each turn of a run builds and evaluates a new batch)."""
        if name in self.tasks:
            self.progress.reset(self.tasks[name], total=total, description=description or name)
        else:
            self.tasks[name] = self.progress.add_task(description or name, total=total)

    def planned(self, builds: int, evaluations: int) -> None:
        self._task("build", builds)
        self._task("evaluate", evaluations)

    def built(self, candidate: Candidate, build: BuildResult) -> None:
        self.progress.advance(self.tasks["build"])
        how = "cached" if build.cached else f"{build.duration_s:.1f} s"
        label = candidate.path or candidate.sha256[:12]
        self.progress.console.print(f"[dim]build {build.status:<13} {escape(label)} ({how})[/]")

    def evaluated(self, result: EvalResult) -> None:
        # The bar counts evaluations that run; stored and prechecked results arrive before planned().
        bar = next((t for t in self.progress.tasks if t.id == self.tasks.get("evaluate")), None)
        if bar is not None and bar.total is not None and bar.completed < bar.total:
            self.progress.advance(bar.id)
        style = STATUS_STYLE[result.status]
        speed = f" {result.speedup:.2f}x" if result.speedup is not None else ""
        cached = " (stored)" if result.cached else ""
        self.progress.console.print(f"[{style}]{result.status:<13}[/]{speed} {escape(result.problem_id)} "
                                    f"{escape(result.candidate_label)}{cached}")


class LoopConsoleEvents(ConsoleEvents, LoopEvents):
    """Adds the model's side: requests per turn, problems finished, tokens and cost so far."""

    def __init__(self, problems: int, samples: int, turns: int, prices: tuple[float, float] | None) -> None:
        super().__init__()
        self.samples, self.turns, self.prices = samples, turns, prices
        self.usage = RunUsage()
        self.remaining: dict[str, int] = {}
        self._task("problems", problems, "problems done")

    def requesting(self, turn: int, count: int) -> None:
        self.turn = turn
        self._task("requests", count, self._request_label())

    def _request_label(self) -> str:
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        cost = f", {format_cost(self.usage, self.prices)}" if self.prices else ""
        return f"turn {self.turn}/{self.turns} answers ({tokens:,} tokens{cost})"

    def answered(self, completion: Completion) -> None:
        self.usage = self.usage.plus(completion.usage, cached=completion.cached)
        self.progress.update(self.tasks["requests"], advance=1, description=self._request_label())

    def conversation_done(self, problem_id: str) -> None:
        self.remaining[problem_id] = self.remaining.get(problem_id, self.samples) - 1
        if self.remaining[problem_id] == 0:
            self.progress.advance(self.tasks["problems"])


def format_cost(usage: RunUsage, prices: tuple[float, float] | None) -> str:
    """What the run's answers cost at these prices (USD per million prompt / completion tokens)."""
    if not prices:
        return "-"
    return f"${(usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]) / 1e6:,.4f}"


# ---- output ----

def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_results(results: list[EvalResult]) -> None:
    problems = sorted({r.problem_id for r in results})
    device = results[0].device_name if results else ""
    table = Table(title=escape(f"{', '.join(problems)} on {device}"), title_justify="left")
    for name in ("candidate", "status", "speedup", "ms", "ref ms", "max abs err", "flags"):
        table.add_column(name, justify="right" if name in ("speedup", "ms", "ref ms", "max abs err") else "left",
                         overflow="fold", no_wrap=name not in ("candidate", "flags"))
    for r in results:
        table.add_row(escape(r.candidate_label),
                      f"[{STATUS_STYLE[r.status]}]{r.status}[/]" + (" [dim](stored)[/]" if r.cached else ""),
                      _fmt(r.speedup, ".2f") + ("x" if r.speedup is not None else ""),
                      _fmt(r.runtime_ms, ".3f"), _fmt(r.ref_runtime_ms, ".3f"),
                      _fmt(r.check.max_abs_err if r.check else None, ".2e"), ", ".join(r.flags))
    out.print(table)
    for r in results:
        if r.status == "correct" or not r.error:
            continue
        out.print(f"\n[{STATUS_STYLE[r.status]}]{r.status}[/] {escape(r.candidate_label)}:")
        out.print(escape(r.error), highlight=False)
        if r.status == "compile_error" and r.build and r.build.log:
            out.print(f"[dim]--- end of the compiler output (full log: {escape(r.build.directory)}/build.log)[/]")
            out.print(escape(log_excerpt(r.build.log)), highlight=False)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")


def show_board(board, as_json: bool) -> None:
    if as_json:
        emit_json(board.model_dump())
    else:
        render(board, out)


# ---- commands ----

def _root(args) -> Path:
    return Path(args.problems_dir).resolve() if args.problems_dir else problem_index.default_root()


def cmd_problems_list(args) -> int:
    found, errors = problem_index.index(_root(args))
    if args.level is not None:
        found = [p for p in found if p.level == args.level]
    if args.target:
        found = [p for p in found if p.target == args.target]
    for message in errors:
        err.print(f"[yellow]warning:[/] {escape(message)}")
    if args.json:
        emit_json([{"id": p.id, "level": p.level, "target": p.target, "path": p.path,
                    "description": p.description, "sha256": p.sha256, "tags": list(p.tags),
                    "memory_gb": p.memory_gb} for p in found])
        return 0
    table = Table()
    for name in ("id", "level", "target", "tags", "description"):
        table.add_column(name)
    for p in found:
        table.add_row(escape(p.id), "-" if p.level is None else str(p.level), p.target, escape(", ".join(p.tags)),
                      escape(p.description))
    out.print(table)
    out.print(f"{len(found)} problems in {_root(args)}")
    return 0


def _memory_filter(problems: list, limit: float | None) -> list:
    """Drop problems whose declared MEMORY_GB exceeds --max-memory-gb, saying which."""
    if limit is None:
        return problems
    kept = [p for p in problems if p.memory_gb is None or p.memory_gb <= limit]
    for p in problems:
        if p not in kept:
            err.print(f"[yellow]skipped[/] {escape(p.id)}: needs {p.memory_gb:g} GB (--max-memory-gb {limit:g})")
    return kept


def cmd_problems_validate(args) -> int:
    root = _root(args)
    if args.all == bool(args.problems):
        raise UsageError("name the problems to validate (ids, sets such as level1, directories or .py paths), "
                         "or pass --all")
    malformed: list[str] = []
    if args.all:
        chosen, malformed = problem_index.index(root)
    else:
        chosen = problem_index.select(",".join(args.problems), root)
    chosen = _memory_filter(chosen, args.max_memory_gb)
    gpus = visible_gpus()
    if args.target == "cuda" and not gpus and not args.static:
        raise UsageError("--target cuda needs a GPU, and nvidia-smi shows none here (use --static for the "
                         "checks that need no device)")
    plan: dict[tuple[str, str], list] = {}  # (mode, target) -> problems, each group in one child
    for problem in chosen:
        target = args.target or problem.target
        mode = "static" if args.static or (target == "cuda" and not gpus) else "full"
        plan.setdefault((mode, target), []).append(problem)
    settings = load_settings(results_dir=args.results_dir)
    results: list[GateResult] = []
    started = time.monotonic()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    with progress:
        for (mode, target), group in plan.items():
            task = progress.add_task(f"{mode} gate, {target}", total=len(group))

            def on_result(problem, obs, duration_s, mode=mode, target=target, task=task):
                result = gate.assess(problem, mode, target, obs, duration_s)
                results.append(result)
                progress.advance(task)
                if not args.json:
                    mark = "[green]pass[/]" if result.passed else "[red]FAIL[/]"
                    progress.console.print(f"{mark} {mode:<6} {escape(problem.id)}"
                                           + "".join(f"\n       {escape(r)}" for r in result.reasons),
                                           highlight=False, soft_wrap=True)

            gate.run_child_over(group, mode, target, log_dir=settings.results_dir / "gate",
                                gpu_index=gpus[0].index if target == "cuda" and gpus else None,
                                timeout_s=args.timeout, on_result=on_result)
    elapsed = time.monotonic() - started
    failed = [r for r in results if not r.passed]
    if args.json:
        emit_json({"results": [r.model_dump() for r in results], "malformed": malformed,
                   "passed": len(results) - len(failed), "failed": len(failed) + len(malformed),
                   "duration_s": round(elapsed, 1)})
    else:
        print_gate(results, malformed)
        static_only = sum(1 for r in results if r.mode == "static" and r.passed)
        out.print(f"{len(results) - len(failed)} passed ({static_only} of them static only"
                  + (", no GPU here" if not gpus and static_only else "") + f"), "
                  f"{len(failed) + len(malformed)} failed, in {elapsed:.0f} s", highlight=False)
    return 1 if failed or malformed else 0


def print_gate(results: list[GateResult], malformed: list[str]) -> None:
    table = Table(title_justify="left")
    for name in ("problem", "gate", "result", "eager ms", "peak GB", "output", "MB moved", "GFLOP"):
        table.add_column(name, justify="right" if name in ("eager ms", "peak GB", "MB moved", "GFLOP") else "left",
                         overflow="fold")
    for r in sorted(results, key=lambda r: r.problem_id):
        table.add_row(escape(r.problem_id), f"{r.mode} {r.target}",
                      "[green]pass[/]" if r.passed else "[red]FAIL[/]", _fmt(r.eager_ms, ".3f"),
                      _fmt(r.peak_memory_gb, ".2f"), escape(", ".join(r.outputs)),
                      _fmt(r.bytes_moved / 1e6 if r.bytes_moved else None, ",.1f"),
                      _fmt(r.flops / 1e9 if r.flops else None, ",.2f"))
    out.print(table)
    for r in results:
        for reason in r.reasons:
            out.print(f"[red]FAIL[/] {escape(r.problem_id)}: {escape(reason)}", highlight=False, soft_wrap=True)
        for warning in r.warnings:
            out.print(f"[yellow]warning[/] {escape(r.problem_id)}: {escape(warning)}", highlight=False,
                      soft_wrap=True)
    for message in malformed:
        out.print(f"[red]FAIL[/] {escape(message)}", highlight=False, soft_wrap=True)


PROBLEM_NAME = re.compile(r"[a-z][a-z0-9_]*")


def cmd_problems_new(args) -> int:
    if not PROBLEM_NAME.fullmatch(args.name):
        raise UsageError(f"bad problem name {args.name!r}: use lower-case letters, digits and '_' "
                         "(it names the file and the module), e.g. fused_gelu_bias")
    target = "cpu" if args.level == "cpu" else "cuda"
    folder = _root(args) / ("cpu" if target == "cpu" else f"level{args.level}")
    path = folder / f"{args.name}.py"
    if path.exists():
        raise UsageError(f"{path} already exists; pick another name or edit that file")
    sizes = {"batch": 1024, "dim": 4096} if target == "cpu" else {"batch": 16384, "dim": 32768}
    template = (Path(__file__).parent / "templates" / "problem.py.tmpl").read_text()
    text = template.format(title=args.name.replace("_", " ").capitalize(), problem_id=f"{folder.name}/{args.name}",
                           target_line="", **sizes)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    out.print(f"wrote {path}\nedit it, then check it with: harness problems validate {folder.name}/{args.name}",
              highlight=False)
    return 0


def cmd_problems_show(args) -> int:
    problem = problem_index.resolve(args.problem, _root(args))
    source = Path(problem.path).read_text()
    if args.json:
        emit_json({**problem.model_dump(), "source": source})
        return 0
    out.print(f"[bold]{escape(problem.id)}[/]  level {problem.level if problem.level is not None else '-'}  "
              f"target {problem.target}  {escape(problem.path)}")
    if problem.tags:
        out.print(f"tags: {escape(', '.join(problem.tags))}")
    for name, value in (("FLOPS", problem.flops), ("BYTES", problem.bytes), ("MEMORY_GB", problem.memory_gb)):
        if value is not None:
            out.print(f"{name} = {value:,}")
    if problem.atol is not None or problem.rtol is not None:
        out.print(f"tolerance: atol={problem.atol} rtol={problem.rtol}")
    out.print(Syntax(source, "python", line_numbers=False))
    return 0


def _settings(args):
    return load_settings(results_dir=args.results_dir, db_path=args.db, trials=args.trials,
                         build_timeout_s=args.build_timeout, eval_timeout_s=args.eval_timeout,
                         build_workers=args.build_workers, force=args.force or None,
                         timing={"budget_s": args.timing_budget})


def cmd_eval(args) -> int:
    problem = problem_index.resolve(args.problem, _root(args))
    if not _memory_filter([problem], args.max_memory_gb):
        raise UsageError(f"{problem.id} declares MEMORY_GB = {problem.memory_gb:g}, above --max-memory-gb")
    jobs = candidate_jobs(problem, args.candidates)
    device = discover(args.target)
    settings = _settings(args)
    err.print(f"[dim]target {device.target} on {escape(device.name)}; results in {settings.db}[/]")
    with Store(settings.db) as store, ConsoleEvents() as events:
        recorded = evaluate(jobs, device=device, settings=settings, store=store,
                            run=args.run or default_run_name("eval"), kind="eval", events=events)
    results = [result for _, result in recorded]
    if args.json:
        for r in results:
            emit_json(r.summary())
    else:
        print_results(results)
    return 0


# Flags that shape what a run generates: stored with the run, and taken from it on --resume. (--base-url
# may be given again: it says where the server is, and the stored copy has its credentials removed.)
GENERATION_FLAGS = ("model", "problems", "problem", "samples", "turns", "temperature", "top_p",
                    "max_tokens", "max_completion_tokens", "reasoning_effort", "prompts_dir")


def _run_config(args, device, store: Store, run: str | None) -> tuple[str, RunConfig]:
    """The run's name and config: from the flags, or from the stored run on --resume."""
    if args.resume:
        given = [f"--{f.replace('_', '-')}" for f in GENERATION_FLAGS if getattr(args, f, None) not in (None, [])]
        if given:
            raise UsageError(f"--resume continues a run with its own settings; drop {', '.join(given)} "
                             "(or start a new run with --run NAME)")
        names = [r.name for r in store.runs() if r.kind == args.command]
        run = run or (names[-1] if names else None)
        stored = store.run_config(run) if run else None
        if not stored:
            raise UsageError(f"nothing to resume: {store.path} has no `harness {args.command}` run"
                             + (f" named {run!r}" if run else "")
                             + (f" (there are: {', '.join(names)})" if names else ""))
        config = RunConfig.model_validate_json(stored)
        if config.target != device.target:
            raise UsageError(f"run {run!r} is on the {config.target} target, but --target/device gives {device.target}")
        return run, config
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL") if args.model else None
    selector = ",".join([*(args.problem or []), *filter(None, [args.problems])]) or DEFAULT_SET[device.target]
    config = RunConfig(
        model=args.model or OfflineProvider.name, base_url=redact_url(base_url), target=device.target,
        problems=selector, samples=args.samples or 1, turns=getattr(args, "turns", None) or 1,
        sampling=Sampling(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                          max_completion_tokens=args.max_completion_tokens, reasoning_effort=args.reasoning_effort),
        prompts_dir=str(Path(args.prompts_dir).resolve()) if args.prompts_dir else None)
    run = run or default_run_name(args.command if args.model else f"reference-{device.target}")
    stored = store.run_config(run)
    if stored:
        before = RunConfig.model_validate_json(stored)
        fixed = ("model", "base_url", "target", "sampling", "prompts_dir")
        changed = [f for f in fixed if getattr(before, f) != getattr(config, f)]
        if changed:
            raise UsageError(f"run {run!r} was made with other settings ({', '.join(changed)}: "
                             f"{', '.join(repr(getattr(before, f)) for f in changed)}); continue it with "
                             "--resume, or pick a new --run name")
    return run, config


def _provider(config: RunConfig, args):
    if config.model == OfflineProvider.name:
        return OfflineProvider(SOLUTIONS_DIR)
    # The stored base URL has credentials removed: take the real one from the flag or environment.
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL") or config.base_url
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        if not base_url or "api.openai.com" in base_url:
            raise UsageError("OPENAI_API_KEY is not set; export it, or pass --base-url for a local server "
                             "that needs no key")
        key = PLACEHOLDER_KEY
    return OpenAIProvider(config.model, base_url=base_url, api_key=key, concurrency=args.concurrency,
                          timeout_s=args.request_timeout, retry=RetryPolicy(max_retries=args.max_retries))


def _generate(args, evaluate_turns: bool):
    """Shared by `run` and `generate`: the run name, the loop's outcomes, and the run's stored results."""
    device = discover(args.target)
    settings = _settings(args)
    if args.run and not RUN_NAME.match(args.run):
        raise UsageError(f"bad run name {args.run!r}: use letters, digits, '.', '_' and '-' (it names a folder)")
    with Store(settings.db) as store:
        run, config = _run_config(args, device, store, args.run)
        provider = _provider(config, args)
        problems = problem_index.select(config.problems, _root(args))
        problems = _memory_filter(problems, args.max_memory_gb)
        if isinstance(provider, OfflineProvider):
            missing = [p.id for p in problems if provider.source_path(p) is None]
            if missing:
                err.print(f"[yellow]skipped[/] {len(missing)} of {len(problems)} problems with no "
                          f"solutions/reference/<id>.py: {escape(', '.join(missing[:6]))}"
                          + (", ..." if len(missing) > 6 else ""), soft_wrap=True)
            problems = [p for p in problems if provider.source_path(p) is not None]
            if not problems:
                raise UsageError(f"none of the problems selected by {config.problems!r} has a reference solution "
                                 "in solutions/reference/ (pass --model to ask a model instead)")
        prompts = Prompts(device.target, Path(config.prompts_dir) if config.prompts_dir else None)
        err.print(f"[dim]run {run}: {escape(config.model)}"
                  + (f" at {escape(config.base_url)}" if config.base_url else "")
                  + f", {len(problems)} problems x {config.samples} samples x "
                  f"{config.turns if evaluate_turns else 1} turns, target {device.target} on {escape(device.name)}; "
                  f"results in {settings.db}[/]", soft_wrap=True)
        facts = gather(device)
        prices = (args.price_in or 0.0, args.price_out or 0.0) if args.price_in or args.price_out else None
        with LoopConsoleEvents(len(problems), config.samples, config.turns, prices) as events:
            loop = Loop(run=run, config=config, provider=provider, prompts=prompts, facts=facts, device=device,
                        settings=settings, store=store, solutions_dir=_solutions_dir(args),
                        use_cache=not args.no_cache, events=events)
            outcomes = asyncio.run(_go(loop, provider, problems, evaluate_turns))
        usage = store.usage(run)
        err.print(f"[dim]{usage.requests} answers ({usage.cached} from the response cache), "
                  f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens"
                  + (f" ({usage.reasoning_tokens:,} reasoning)" if usage.reasoning_tokens else "")
                  + (f", cost {format_cost(usage, prices)}" if prices else "") + "[/]", soft_wrap=True)
        return run, outcomes, store.results(run) if evaluate_turns else []


async def _go(loop: Loop, provider, problems, evaluate_turns: bool):
    try:
        return await loop.go(problems, evaluate_turns=evaluate_turns)
    finally:
        await provider.close()


def _solutions_dir(args) -> Path:
    return Path(args.solutions_dir or os.environ.get("HARNESS_SOLUTIONS_DIR") or "solutions").resolve()


def cmd_run(args) -> int:
    run, _, results = _generate(args, evaluate_turns=True)
    show_board(leaderboard(run, results), args.json)
    return 0


def cmd_generate(args) -> int:
    run, outcomes, _ = _generate(args, evaluate_turns=False)
    if args.json:
        for outcome in outcomes:
            emit_json({"run": run, **outcome.summary()})
        return 0
    table = Table(title=f"run {escape(run)}", title_justify="left")
    for name in ("problem", "sample", "candidate", "tokens"):
        table.add_column(name)
    for o in outcomes:
        table.add_row(escape(o.problem.id), str(o.sample),
                      escape(o.candidate.path) if o.candidate else f"[dim]no_code: {escape(o.reason or '')}[/]",
                      str(o.completion.usage.prompt_tokens + o.completion.usage.completion_tokens)
                      + (" (cached)" if o.completion.cached else ""))
    out.print(table)
    return 0


def _open_store(args) -> Store:
    settings = load_settings(results_dir=args.results_dir, db_path=args.db)
    if not settings.db.is_file():
        raise UsageError(f"no results yet: {settings.db} does not exist (run `harness run` or `harness eval` first)")
    return Store(settings.db)


def cmd_report(args) -> int:
    with _open_store(args) as store:
        runs = store.runs()
        names = [r.name for r in runs]
        if not runs:
            raise UsageError(f"{store.path} holds no runs yet")
        run = args.run or names[-1]
        if run not in names:
            close = difflib.get_close_matches(run, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else "; `harness runs` lists them"
            raise UsageError(f"unknown run {run!r}{hint}")
        board = leaderboard(run, store.results(run))
    show_board(board, args.json)
    return 0


def cmd_runs(args) -> int:
    with _open_store(args) as store:
        runs = store.runs()
    if args.json:
        emit_json([r.__dict__ for r in runs])
        return 0
    table = Table()
    for name in ("run", "created", "kind", "model", "target", "device", "evaluations", "answers", "tokens"):
        table.add_column(name)
    for r in runs:
        table.add_row(escape(r.name), r.created_at, r.kind, escape(r.model or "-"), r.target, escape(r.device_name),
                      str(r.evaluations), str(r.requests), f"{r.tokens:,}")
    out.print(table)
    return 0


# ---- parser ----

def _positive(kind: type):
    """An argparse type: a number of `kind` above zero."""
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            what = "a positive integer" if kind is int else "positive"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in "invalid int value" messages
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Evaluate custom kernels (CUDA or C++ through load_inline) against PyTorch references: "
                    "isolated builds, correctness over several seeds, interleaved timing, results in SQLite.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    problems_opts = argparse.ArgumentParser(add_help=False)
    problems_opts.add_argument("--problems-dir", metavar="DIR",
                               help="problem root (default: problems/ of this checkout, or $HARNESS_PROBLEMS_DIR)")
    store_opts = argparse.ArgumentParser(add_help=False)
    store_opts.add_argument("--results-dir", type=Path, metavar="DIR",
                            help="results directory: harness.db and the build cache (default: ./results, "
                                 "or $HARNESS_RESULTS_DIR)")
    store_opts.add_argument("--db", type=Path, metavar="FILE", help="SQLite file (default: RESULTS_DIR/harness.db)")
    eval_opts = argparse.ArgumentParser(add_help=False, parents=[problems_opts, store_opts])
    eval_opts.add_argument("--target", choices=TARGETS,
                           help="cuda (custom CUDA on the GPU) or cpu (C++ on the CPU); default: cuda if a GPU is visible")
    eval_opts.add_argument("--max-memory-gb", type=_positive(float), metavar="GB",
                           help="skip problems that declare needing more GPU memory than this (MEMORY_GB)")
    eval_opts.add_argument("--run", metavar="NAME", help="run name the results are stored under (default: generated)")
    eval_opts.add_argument("--force", action="store_true", help="re-evaluate even if the store already has the result")
    eval_opts.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    eval_opts.add_argument("--trials", type=_positive(int), metavar="N", help="correctness trials (default 5)")
    eval_opts.add_argument("--build-timeout", type=_positive(float), metavar="S", help="seconds per build (default 600)")
    eval_opts.add_argument("--eval-timeout", type=_positive(float), metavar="S",
                           help="seconds per evaluation child (default 300)")
    eval_opts.add_argument("--timing-budget", type=_positive(float), metavar="S",
                           help="seconds of timing per candidate before stopping unconverged (default 5)")
    eval_opts.add_argument("--build-workers", type=_positive(int), metavar="N",
                           help="parallel builds (default: number of CPUs)")

    problems = sub.add_parser("problems", help="list and inspect problems")
    psub = problems.add_subparsers(dest="problems_command", required=True, metavar="SUBCOMMAND")
    plist = psub.add_parser("list", parents=[problems_opts], help="list problems",
                            description="List the problems under the problem root (parsed, not imported).")
    plist.add_argument("--level", type=int, metavar="N", help="only this level")
    plist.add_argument("--target", choices=TARGETS, help="only problems meant for this target")
    plist.add_argument("--json", action="store_true", help="JSON list of {id, level, path, ...}")
    plist.set_defaults(func=cmd_problems_list)
    pshow = psub.add_parser("show", parents=[problems_opts], help="show one problem",
                            description="Show a problem's metadata and source. ID or path to a .py file.")
    pshow.add_argument("problem", metavar="ID_OR_PATH")
    pshow.add_argument("--json", action="store_true", help="metadata and source as JSON")
    pshow.set_defaults(func=cmd_problems_show)
    pval = psub.add_parser(
        "validate", parents=[problems_opts], help="the quality gate: is each problem loadable, deterministic, "
                                                  "informative and sensibly sized?",
        description="Static checks (no device: metadata, signatures, output shapes, bytes and FLOPs on the meta "
                    "device) and, on the problem's target, the full gate: the reference is deterministic for a seed, "
                    "its output differs across seeds and is not degenerate (mostly zeros, constant, passable by a "
                    "constant, swallowed by the tolerance), its eager time and peak memory are in range. Without a "
                    "GPU, cuda problems get the static checks only. Exit status 1 if any problem fails.")
    pval.add_argument("problems", nargs="*", metavar="ID", help="problem ids, sets (level1, cpu), directories or "
                                                               ".py paths")
    pval.add_argument("--all", action="store_true", help="every problem under the problem root")
    pval.add_argument("--target", choices=TARGETS, help="run the full gate on this target for every problem "
                                                       "(default: each problem's own target)")
    pval.add_argument("--static", action="store_true", help="only the checks that need no device")
    pval.add_argument("--max-memory-gb", type=_positive(float), metavar="GB",
                      help="skip problems that declare MEMORY_GB above this")
    pval.add_argument("--timeout", type=_positive(float), metavar="S",
                      help="seconds per problem before it fails as hung (static 120, full 600)")
    pval.add_argument("--results-dir", type=Path, metavar="DIR", help="where the gate's logs go (RESULTS_DIR/gate)")
    pval.add_argument("--json", action="store_true", help="one JSON object: results, passed, failed, duration_s")
    pval.set_defaults(func=cmd_problems_validate)
    pnew = psub.add_parser("new", parents=[problems_opts], help="write a documented template for a new problem",
                           description="Write problems/levelN/NAME.py (or problems/cpu/NAME.py with --level cpu) "
                                       "from a template that explains every part, then validate it.")
    pnew.add_argument("name", metavar="NAME", help="file name without .py, e.g. fused_gelu_bias")
    pnew.add_argument("--level", required=True, choices=("1", "2", "3", "cpu"),
                      help="1 single operators, 2 fusions, 3 architectures, cpu for the CPU target")
    pnew.set_defaults(func=cmd_problems_new)

    ev = sub.add_parser("eval", parents=[eval_opts], help="evaluate candidate files on one problem",
                        description="Build, check and time each candidate file (defining ModelNew) against the "
                                    "problem's Model. Exit status 0 whenever the evaluation ran, whatever the verdicts.")
    ev.add_argument("--problem", required=True, metavar="ID_OR_PATH", help="problem id or path to a problem .py file")
    ev.add_argument("candidates", nargs="+", metavar="CANDIDATE.py")
    ev.set_defaults(func=cmd_eval)

    model_opts = argparse.ArgumentParser(add_help=False)
    group = model_opts.add_argument_group(
        "model", "Without --model, an offline provider answers every problem with its solutions/reference/ file. "
                 "The key comes from OPENAI_API_KEY (never passed to candidates, never stored).")
    group.add_argument("--model", metavar="NAME", help="model name as the server knows it")
    group.add_argument("--base-url", metavar="URL",
                       help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 for vLLM "
                            "(default: $OPENAI_BASE_URL, else the OpenAI API)")
    group.add_argument("--samples", type=_positive(int), metavar="N", help="independent conversations per problem (1)")
    group.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (server default)")
    group.add_argument("--top-p", type=float, metavar="P", help="nucleus sampling (server default)")
    group.add_argument("--max-tokens", type=_positive(int), metavar="N", help="completion token cap")
    group.add_argument("--max-completion-tokens", type=_positive(int), metavar="N",
                       help="token cap including reasoning (reasoning models)")
    group.add_argument("--reasoning-effort", choices=("minimal", "low", "medium", "high"),
                       help="reasoning effort (reasoning models)")
    group.add_argument("--concurrency", type=_positive(int), default=8, metavar="N",
                       help="requests in flight at once (8)")
    group.add_argument("--request-timeout", type=_positive(float), default=600.0, metavar="S",
                       help="seconds per request before it is retried (600)")
    group.add_argument("--max-retries", type=int, default=6, metavar="N",
                       help="retries on 429 (honouring Retry-After), 5xx, timeouts and dropped connections, "
                            "with exponential backoff and jitter (6)")
    group.add_argument("--no-cache", action="store_true",
                       help="ask again even if an identical request (model, messages, sampling, sample) was answered")
    group.add_argument("--prompts-dir", metavar="DIR",
                       help="your own templates: DIR/<target>/{system,first_turn,feedback}.j2 and "
                            "example_{problem,solution}.py (default: prompts/)")
    group.add_argument("--solutions-dir", metavar="DIR",
                       help="where candidates are written, as DIR/<run>/<problem id>/sampleS_turnT.py "
                            "(default: ./solutions, or $HARNESS_SOLUTIONS_DIR)")
    group.add_argument("--price-in", type=float, metavar="USD", help="price per million prompt tokens, for the cost")
    group.add_argument("--price-out", type=float, metavar="USD", help="price per million completion tokens")
    group.add_argument("--resume", action="store_true",
                       help="continue the latest run (or --run NAME) with its stored settings; rerunning the same "
                            "--run does the same: stored turns are replayed, never asked again")

    run = sub.add_parser(
        "run", parents=[eval_opts, model_opts], help="the main job: generate, evaluate, feed back, report",
        description="For every selected problem (default: level1 on cuda, cpu on cpu), ask the model for a ModelNew, "
                    "build, check and time it, send the result back as the next turn (--turns), store every turn, "
                    "and print the leaderboard of the best correct candidate per problem. With no --model, the "
                    "answers are the hand-written solutions/reference/ files.")
    run.add_argument("--problems", metavar="SELECTOR",
                     help="comma-separated sets (level1, cpu), directories, ids or .py paths")
    run.add_argument("--problem", action="append", metavar="ID_OR_PATH", help="one problem (repeatable)")
    run.add_argument("--turns", type=_positive(int), metavar="K",
                     help="turns per conversation: feedback rounds + 1 (1)")
    run.set_defaults(func=cmd_run)

    gen = sub.add_parser(
        "generate", parents=[eval_opts, model_opts], help="only ask the model: write candidates, evaluate nothing",
        description="Ask the model once per problem and sample; write each extracted candidate to "
                    "SOLUTIONS_DIR/<run>/<problem id>/ and store the prompt and the completion. "
                    "--json prints one object per sample: run, problem, sample, turn, status (generated or "
                    "no_code), candidate (path or null), reason, tokens.")
    gen.add_argument("--problems", metavar="SELECTOR",
                     help="comma-separated sets (level1, cpu), directories, ids or .py paths")
    gen.add_argument("--problem", action="append", metavar="ID_OR_PATH", help="one problem (repeatable)")
    gen.set_defaults(func=cmd_generate)

    rep = sub.add_parser("report", parents=[store_opts], help="leaderboard of a stored run",
                         description="Per-problem best speedups and the run summary (compile rate, correctness, "
                                     "fast_p, geometric mean speedup).")
    rep.add_argument("--run", metavar="NAME", help="run to report (default: the latest)")
    rep.add_argument("--json", action="store_true", help="machine-readable output")
    rep.set_defaults(func=cmd_report)

    runs = sub.add_parser("runs", parents=[store_opts], help="list stored runs")
    runs.add_argument("--json", action="store_true", help="machine-readable output")
    runs.set_defaults(func=cmd_runs)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ProblemError, CandidateError, DeviceError, StoreError, PromptError, FactsError,
            ProviderConfigError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except ProviderError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        if args.command in ("run", "generate"):
            err.print("what was finished is stored; continue with the same command and --run, or with --resume",
                      soft_wrap=True)
        return 1
    except ValidationError as exc:
        first = exc.errors()[0]
        err.print(f"[red]error:[/] bad setting {'.'.join(map(str, first['loc']))}: {escape(first['msg'])}")
        return 2
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]: results finished so far are in the store"
                  + ("; continue with --resume" if args.command in ("run", "generate") else ""))
        return 130
