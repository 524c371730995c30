"""The `harness` command."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from pydantic import ValidationError
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from harness.cli import bench as cli_bench
from harness.cli import problems as cli_problems
from harness.cli import report as cli_report
from harness.cli.console import (
    UsageError,
    emit_json,
    err,
    fmt,
    out,
    positive,
    problem_root,
)
from harness.cli.problems import memory_filter
from harness.cli.report import DEFAULT_SET, OFFLINE_SET
from harness.config import load_settings
from harness.device import DeviceError, discover
from harness.eval.build import log_excerpt
from harness.eval.candidate import CandidateError
from harness.eval.pipeline import (
    SOLUTIONS_DIR,
    Events,
    candidate_jobs,
    default_run_name,
    evaluate,
)
from harness.eval.ray import RayUnavailable
from harness.facts import FactsError, gather
from harness.llm.loop import RUN_NAME, Loop, LoopEvents, RunConfig
from harness.llm.prompts import PromptError, Prompts
from harness.llm.providers import (
    PLACEHOLDER_KEY,
    OfflineProvider,
    OpenAIProvider,
    ProviderConfigError,
    ProviderError,
    RetryPolicy,
    redact_url,
)
from harness.problems import index as problem_index
from harness.problems.index import ProblemError
from harness.report.leaderboard import (
    STATUS_STYLE,
    ProblemContext,
    contexts_for,
    render,
    run_board,
)
from harness.store import RunUsage, Store, StoreError
from harness.types import (
    HARNESS_ERROR,
    TARGETS,
    BuildResult,
    Candidate,
    Completion,
    EvalResult,
    Sampling,
)

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
        flags = f" [yellow]\\[{escape(', '.join(result.flags))}][/]" if result.flags else ""
        self.progress.console.print(f"[{style}]{result.status:<13}[/]{speed} {escape(result.problem_id)} "
                                    f"{escape(result.candidate_label)}{cached}{flags}")


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

def print_results(results: list[EvalResult], contexts: dict[str, ProblemContext]) -> None:
    problems = sorted({r.problem_id for r in results})
    device = results[0].device_name if results else ""
    table = Table(title=escape(f"{', '.join(problems)} on {device}"), title_justify="left")
    numbers = ("speedup", "vs compile", "ms", "ref ms", "% SOL", "max abs err")
    for name in ("candidate", "status", *numbers, "flags"):
        table.add_column(name, justify="right" if name in numbers else "left",
                         overflow="fold", no_wrap=name not in ("candidate", "flags"))
    for r in results:
        ctx = contexts.get(r.problem_sha256, ProblemContext())
        vs_compile, sol = ctx.vs_compile(r.speedup), ctx.sol_fraction(r.runtime_ms)
        table.add_row(escape(r.candidate_label),
                      f"[{STATUS_STYLE[r.status]}]{r.status}[/]" + (" [dim](stored)[/]" if r.cached else ""),
                      fmt(r.speedup, ".2f") + ("x" if r.speedup is not None else ""),
                      fmt(vs_compile, ".2f") + ("x" if vs_compile is not None else ""),
                      fmt(r.runtime_ms, ".3f"), fmt(r.ref_runtime_ms, ".3f"),
                      fmt(sol and 100 * sol, ".0f"),
                      fmt(r.check.max_abs_err if r.check else None, ".2e"), ", ".join(r.flags))
    out.print(table)
    for r in results:
        if r.status == "correct" or not r.error:
            continue
        why = " (no verdict: the harness or the machine failed)" if r.status == HARNESS_ERROR else ""
        out.print(f"\n[{STATUS_STYLE[r.status]}]{r.status}[/] {escape(r.candidate_label)}{why}:")
        out.print(escape(r.error), highlight=False)
        if r.status == "compile_error" and r.build and r.build.log:
            out.print(f"[dim]--- end of the compiler output (full log: {escape(r.build.directory)}/build.log)[/]")
            out.print(escape(log_excerpt(r.build.log)), highlight=False)


def show_board(board, as_json: bool) -> None:
    if as_json:
        emit_json(board.model_dump())
    else:
        render(board, out)


# ---- commands ----

def _settings(args):
    return load_settings(results_dir=args.results_dir, db_path=args.db, trials=args.trials,
                         build_timeout_s=args.build_timeout, eval_timeout_s=args.eval_timeout,
                         build_workers=args.build_workers, gpus=args.gpus, force=args.force or None,
                         executor=args.executor, ray_address=args.ray_address,
                         max_speedup=args.max_speedup, compile_baselines=args.compile_baselines or None,
                         contention_wait_s=args.contention_wait,
                         timing={"budget_s": args.timing_budget})


def cmd_eval(args) -> int:
    problem = problem_index.resolve(args.problem, problem_root(args))
    if not memory_filter([problem], args.max_memory_gb):
        raise UsageError(f"{problem.id} declares MEMORY_GB = {problem.memory_gb:g}, above --max-memory-gb")
    jobs = candidate_jobs(problem, args.candidates)
    device = discover(args.target)
    settings = _settings(args)
    err.print(f"[dim]target {device.target} on {escape(device.name)}; results in {settings.db}[/]")
    with Store(settings.db) as store, ConsoleEvents() as events:
        recorded = evaluate(jobs, device=device, settings=settings, store=store,
                            run=args.run or default_run_name("eval"), kind="eval", events=events)
        results = [result for _, result in recorded]
        contexts = contexts_for(store, results)
    if args.json:
        for r in results:
            ctx = contexts.get(r.problem_sha256, ProblemContext())
            emit_json({**r.summary(), "speedup_vs_compile": ctx.vs_compile(r.speedup),
                       "sol_fraction": ctx.sol_fraction(r.runtime_ms)})
    else:
        print_results(results, contexts)
    faults = sum(r.status == HARNESS_ERROR for r in results)
    if faults:
        err.print(f"[bold red]{faults} harness error(s)[/]: the harness or the machine failed, not the candidate; "
                  "nothing was cached, run the same command again", soft_wrap=True)
        return 3
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
    selector = (",".join([*(args.problem or []), *filter(None, [args.problems])])
                or (DEFAULT_SET if args.model else OFFLINE_SET)[device.target])
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
        if args.price_in is not None or args.price_out is not None:  # prices change no answer: always updatable
            config = config.model_copy(update={"price_in": args.price_in or 0.0, "price_out": args.price_out or 0.0})
        provider = _provider(config, args)
        problems = problem_index.select(config.problems, problem_root(args))
        problems = memory_filter(problems, args.max_memory_gb)
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
        prices = (config.price_in, config.price_out) if config.price_in is not None else None
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
        board = run_board(store, next(r for r in store.runs() if r.name == run), prices) if evaluate_turns else None
        return run, outcomes, board


async def _go(loop: Loop, provider, problems, evaluate_turns: bool):
    try:
        return await loop.go(problems, evaluate_turns=evaluate_turns)
    finally:
        await provider.close()


def _solutions_dir(args) -> Path:
    return Path(args.solutions_dir or os.environ.get("HARNESS_SOLUTIONS_DIR") or "solutions").resolve()


def cmd_run(args) -> int:
    _, _, board = _generate(args, evaluate_turns=True)
    show_board(board, args.json)
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


# ---- parser ----

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
    eval_opts.add_argument("--max-memory-gb", type=positive(float), metavar="GB",
                           help="skip problems that declare needing more GPU memory than this (MEMORY_GB)")
    eval_opts.add_argument("--run", metavar="NAME", help="run name the results are stored under (default: generated)")
    eval_opts.add_argument("--force", action="store_true", help="build and evaluate again from scratch, even if the "
                           "store or the build cache already has the result")
    eval_opts.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    eval_opts.add_argument("--trials", type=positive(int), metavar="N", help="correctness trials (default 5)")
    eval_opts.add_argument("--build-timeout", type=positive(float), metavar="S", help="seconds per build (default 600)")
    eval_opts.add_argument("--eval-timeout", type=positive(float), metavar="S",
                           help="seconds per evaluation child (default 300)")
    eval_opts.add_argument("--timing-budget", type=positive(float), metavar="S",
                           help="seconds of timing per candidate before stopping unconverged (default 5)")
    eval_opts.add_argument("--build-workers", type=positive(int), metavar="N",
                           help="parallel builds (default: number of CPUs)")
    eval_opts.add_argument("--gpus", type=positive(int), metavar="N",
                           help="evaluate on at most N GPUs at once, one evaluation per GPU (default: every visible "
                                "GPU of the same model; CUDA_VISIBLE_DEVICES picks which)")
    eval_opts.add_argument("--executor", choices=("local", "ray"),
                           help="local (default): builds on this machine's CPUs, evaluations on its GPUs; ray: "
                                "builds and evaluations as tasks on a Ray cluster (pip install 'kernel-harness[ray]')")
    eval_opts.add_argument("--ray-address", metavar="ADDR",
                           help="the Ray cluster to join, e.g. ray://head:10001 or auto (default: $RAY_ADDRESS, else "
                                "a local cluster of this machine)")
    eval_opts.add_argument("--compile-baselines", action="store_true",
                           help="also measure the problems' torch.compile baselines (cached; `harness baseline` "
                                "measures them on their own), so results show their speedup over torch.compile")
    eval_opts.add_argument("--contention-wait", type=float, metavar="S",
                           help="before timing on a GPU, wait at most S seconds for other processes computing on it "
                                "to stop (default 30; 0: never wait); work of other processes before (after the "
                                "wait) or during an evaluation flags its result contended, and it is not counted")
    eval_opts.add_argument("--max-speedup", type=positive(float), metavar="X",
                           help="flag speedups over eager above this as implausible_speedup; flagged results are "
                                "not counted (default 10)")

    cli_problems.add_parser(sub, problems_opts)

    ev = sub.add_parser("eval", parents=[eval_opts], help="evaluate candidate files on one problem",
                        description="Build, check and time each candidate file (defining ModelNew) against the "
                                    "problem's Model. Exit status 0 whenever the evaluation ran, whatever the verdicts; "
                                    "3 when the harness itself failed on a candidate (harness_error: no verdict, "
                                    "nothing cached; run it again).")
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
    group.add_argument("--samples", type=positive(int), metavar="N", help="independent conversations per problem (1)")
    group.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (server default)")
    group.add_argument("--top-p", type=float, metavar="P", help="nucleus sampling (server default)")
    group.add_argument("--max-tokens", type=positive(int), metavar="N", help="completion token cap")
    group.add_argument("--max-completion-tokens", type=positive(int), metavar="N",
                       help="token cap including reasoning (reasoning models)")
    group.add_argument("--reasoning-effort", choices=("minimal", "low", "medium", "high"),
                       help="reasoning effort (reasoning models)")
    group.add_argument("--concurrency", type=positive(int), default=8, metavar="N",
                       help="requests in flight at once (8)")
    group.add_argument("--request-timeout", type=positive(float), default=600.0, metavar="S",
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
                    "answers are the hand-written solutions/reference/ files, and the default selection is every "
                    "problem of the target that has one (level1-3 on cuda, cpu on cpu).")
    run.add_argument("--problems", metavar="SELECTOR",
                     help="comma-separated sets (level1, cpu), directories, ids or .py paths")
    run.add_argument("--problem", action="append", metavar="ID_OR_PATH", help="one problem (repeatable)")
    run.add_argument("--turns", type=positive(int), metavar="K",
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

    cli_report.add_parsers(sub, problems_opts, store_opts)
    cli_bench.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ProblemError, CandidateError, DeviceError, StoreError, PromptError, FactsError,
            ProviderConfigError, RayUnavailable) as exc:
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
