"""`harness run` (the main job) and `harness generate`: thin shells over the library's run (api.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

from rich.markup import escape

from harness.api import Connection, RunDone, RunRequest, run
from harness.cli.console import UsageError, emit_json, err, out, positive, problem_root, table_width
from harness.cli.options import problems_selector, selector, settings_from
from harness.cli.progress import RunConsoleEvents
from harness.completions import Sampling
from harness.report.leaderboard import render
from harness.report.tables import Column, print_table
from harness.types import BACKENDS

# Flags that shape what a run generates: stored with the run, and taken from it on --resume. (--base-url
# may be given again: it says where the server is, and the stored copy has its credentials removed.)
GENERATION_FLAGS = ("model", "problems", "problem", "samples", "turns", "temperature", "top_p",
                    "max_tokens", "max_completion_tokens", "reasoning_effort", "prompts_dir", "backend", "tools")


def model_options() -> argparse.ArgumentParser:
    opts = argparse.ArgumentParser(add_help=False)
    group = opts.add_argument_group(
        "model", "Without --model, an offline provider answers every problem with its solutions/reference/ file "
                 "(--backend triton: solutions/reference/triton/). "
                 "The key comes from OPENAI_API_KEY (never passed to candidates, never stored).")
    add = group.add_argument
    add("--model", metavar="NAME", help="model name as the server knows it")
    add("--backend", choices=BACKENDS, help="what the prompt asks for: cuda, kernels built with load_inline (C++ on "
        "the cpu target), or triton, @triton.jit kernels (on the cpu target they run in Triton's interpreter, "
        "checked but never counted as a speedup). Default: cuda. Any answer is judged the same way, whichever "
        "the prompt asked for")
    add("--base-url", metavar="URL", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 for vLLM "
        "(default: $OPENAI_BASE_URL, else the OpenAI API)")
    add("--samples", type=positive(int), metavar="N", help="independent conversations per problem (1)")
    add("--temperature", type=float, metavar="T", help="sampling temperature (server default)")
    add("--top-p", type=float, metavar="P", help="nucleus sampling (server default)")
    add("--max-tokens", type=positive(int), metavar="N", help="completion token cap")
    add("--max-completion-tokens", type=positive(int), metavar="N", help="token cap including reasoning "
        "(reasoning models)")
    add("--reasoning-effort", choices=("minimal", "low", "medium", "high"), help="reasoning effort (reasoning models)")
    add("--concurrency", type=positive(int), default=8, metavar="N", help="requests in flight at once (8)")
    add("--request-timeout", type=positive(float), default=600.0, metavar="S",
        help="seconds per request before it is retried (600)")
    add("--max-retries", type=int, default=6, metavar="N", help="retries on 429 (honouring Retry-After), 5xx, "
        "timeouts and dropped connections, with exponential backoff and jitter (6)")
    add("--no-cache", action="store_true",
        help="ask again even if an identical request (model, messages, sampling, sample) was answered")
    add("--prompts-dir", metavar="DIR", help="your own templates: DIR/KIND/{system,first_turn,feedback}.j2 and "
        "example_{problem,solution}.py, KIND the target (cuda, cpu) or triton (default: prompts/)")
    add("--solutions-dir", metavar="DIR", help="where candidates are written, as DIR/<run>/<problem id>/"
        "sampleS_turnT.py (default: ./solutions, or $HARNESS_SOLUTIONS_DIR)")
    add("--price-in", type=float, metavar="USD", help="price per million prompt tokens, for the cost")
    add("--price-out", type=float, metavar="USD", help="price per million completion tokens")
    add("--resume", action="store_true", help="continue the latest run (or --run NAME) with its stored settings; "
        "rerunning the same --run does the same: stored turns are replayed, never asked again")
    return opts


def add_parsers(sub, select_opts: argparse.ArgumentParser, eval_opts: argparse.ArgumentParser) -> None:
    """run takes every evaluation flag; generate, which evaluates nothing, only those that shape its prompts."""
    model_opts = model_options()
    run_ = sub.add_parser(
        "run", parents=[eval_opts, model_opts], help="the main job: generate, evaluate, feed back, report",
        description="For every selected problem (default: level1 on cuda, cpu on cpu), ask the model for a ModelNew, "
                    "build, check and time it, send the result back as the next turn (--turns), store every turn, "
                    "and print the leaderboard of the best correct candidate per problem. With no --model, the "
                    "answers are the hand-written solutions/reference/ files, and the default selection is every "
                    "problem of the target that has one (level1-3 on cuda, cpu on cpu).")
    run_.add_argument("--turns", type=positive(int), metavar="K",
                      help="turns per conversation: feedback rounds + 1 (1)")
    run_.add_argument("--tools", type=positive(int), metavar="N",
                      help="let each turn call the evaluate tool up to N times before its answer (OpenAI tool "
                           "calling; the calls' evaluations go to the hidden run RUN-tools, the exchange is stored "
                           "with the turn); its answer is then evaluated as without tools")
    gen = sub.add_parser(
        "generate", parents=[select_opts, model_opts], help="only ask the model: write candidates, evaluate nothing",
        description="Ask the model once per problem and sample; write each extracted candidate to "
                    "SOLUTIONS_DIR/<run>/<problem id>/ and store the prompt and the completion. "
                    "--json prints one object per sample: run, problem, sample, turn, status (generated or "
                    "no_code), candidate (path or null), reason, cached, tokens.")
    for parser, func in ((run_, cmd_run), (gen, cmd_generate)):
        problems_selector(parser)
        parser.set_defaults(func=func)


def cmd_run(args) -> int:
    board = _run(args, "run").board
    if board is None:  # a run ranks what it evaluated; only generate has no leaderboard
        raise RuntimeError("harness run ended without a leaderboard")
    if args.json:
        emit_json(board.model_dump())
    else:
        render(board, out, table_width(args))
    return 0


def cmd_generate(args) -> int:
    done = _run(args, "generate")
    if args.json:
        for outcome in done.outcomes:
            emit_json({"run": done.name, **outcome.summary()})
        return 0
    rows = [(escape(o.problem.id), str(o.sample),
             (escape(o.candidate.path or o.candidate.sha256[:12]) if o.candidate
              else f"[dim]no_code: {escape(o.reason or '')}[/]"),
             f"{o.completion.usage.prompt_tokens + o.completion.usage.completion_tokens:,}"
             + (" (cached)" if o.completion.cached else "")) for o in done.outcomes]
    print_table(out, GENERATED_COLUMNS, rows, width=table_width(args), title=f"run {escape(done.name)}")
    return 0


GENERATED_COLUMNS = (Column("problem", "name"), Column("sample", gives_way=2), Column("candidate", "path", gives_way=1),
                     Column("tokens", gives_way=3))


def _run(args, mode: Literal["run", "generate"]) -> RunDone:
    if args.resume:
        given = [f"--{f.replace('_', '-')}" for f in GENERATION_FLAGS if getattr(args, f, None) not in (None, [])]
        if given:
            raise UsageError(
                f"--resume continues a run with its own settings; drop {', '.join(given)} "
                "(or start a new run with --run NAME)"
            )
    settings = settings_from(args)
    events = RunConsoleEvents(args.max_memory_gb, settings.db)
    with events:
        done = run(
            _request(args),
            target=args.target,
            settings=settings,
            connection=_connection(args),
            problems_dir=problem_root(args),
            max_memory_gb=args.max_memory_gb,
            solutions_dir=args.solutions_dir,
            mode=mode,
            events=events,
        )
    usage, prices = done.usage, done.config.prices
    err.print(
        f"[dim]{usage.requests} answers ({usage.cached} from the response cache), "
        f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens"
        + (f" ({usage.reasoning_tokens:,} reasoning)" if usage.reasoning_tokens else "")
        + (f", cost {usage.cost_label(prices)}" if prices is not None else "")
        + tool_use(done)
        + "[/]",
        soft_wrap=True,
    )
    return done


def tool_use(done: RunDone) -> str:
    """The tool calls the turns made (run --tools) and their seconds; '' without tools."""
    steps = [step for o in done.outcomes for step in o.completion.tool_steps]
    if not done.config.tool_calls:
        return ""
    return f"; {len(steps)} tool calls, {sum(s.seconds for s in steps):.1f} s in tools (run {done.name}-tools)"


def _request(args) -> RunRequest:
    prices = None
    if args.price_in is not None or args.price_out is not None:  # prices change no answer: always updatable
        prices = (args.price_in or 0.0, args.price_out or 0.0)
    if args.resume:
        return RunRequest(name=args.run, resume=True, prices=prices)
    sampling = Sampling(
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        max_completion_tokens=args.max_completion_tokens,
        reasoning_effort=args.reasoning_effort,
    )
    return RunRequest(
        model=args.model,
        problems=selector(args),
        samples=args.samples,
        turns=getattr(args, "turns", None),
        sampling=sampling,
        prompts_dir=str(Path(args.prompts_dir)) if args.prompts_dir else None,
        backend=args.backend,
        prices=prices,
        name=args.run,
        tools=getattr(args, "tools", None),
    )


def _connection(args) -> Connection:
    return Connection(
        base_url=args.base_url,
        concurrency=args.concurrency,
        request_timeout_s=args.request_timeout,
        max_retries=args.max_retries,
        use_cache=not args.no_cache,
    )
