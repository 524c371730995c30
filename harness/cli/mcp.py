"""`harness mcp`: serve the evaluation to an agent as Model Context Protocol tools (harness/agent/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.agent.budget import Budget
from harness.agent.mcp_server import require_sdk, serve
from harness.agent.toolbox import Serving, Toolbox
from harness.cli.console import err, positive, problem_root
from harness.cli.options import settings_from
from harness.eval import sanitize
from harness.types import BACKENDS

DEFAULT_CALLS, DEFAULT_SECONDS = 20, 3600.0


def add_parser(sub, eval_opts: argparse.ArgumentParser) -> None:
    mcp = sub.add_parser(
        "mcp", parents=[eval_opts], help="serve evaluation to an agent as MCP tools (stdio or local HTTP)",
        description="A Model Context Protocol server whose tools are list_problems, show_problem, evaluate and "
                    "profile: the same sandbox, judge, workloads and flags as `harness eval`, with held-out workloads "
                    "never shown. Every evaluation is stored under one run (--run, default mcp-DATE). Calls to "
                    "evaluate and profile spend a budget set here; each answer reports what is left. Needs the mcp "
                    "SDK: pip install 'kernel-harness[mcp]'.")
    add = mcp.add_argument
    add("--transport", choices=("stdio", "http"), default="stdio",
        help="stdio (default: the client starts this command) or http (streamable HTTP on --host:--port, path /mcp)")
    add("--host", default="127.0.0.1", help="the address HTTP listens on (default 127.0.0.1: this machine only)")
    add("--port", type=positive(int), default=8765, help="the port HTTP listens on (default 8765)")
    add("--budget-calls", type=positive(int), default=DEFAULT_CALLS, metavar="N",
        help=f"calls to evaluate and profile the session may make (default {DEFAULT_CALLS})")
    add("--budget-s", type=positive(float), default=DEFAULT_SECONDS, metavar="S",
        help=f"seconds of evaluation the session may spend; a call starts while any is left (default "
             f"{DEFAULT_SECONDS:g})")
    add("--backend", choices=BACKENDS, default="cuda",
        help="what show_problem's prompt asks for: cuda (load_inline; C++ on the cpu target) or triton")
    add("--prompts-dir", type=Path, metavar="DIR", help="your own prompt templates (default: prompts/)")
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args) -> int:
    require_sdk()
    settings = settings_from(args)
    serving = Serving(target=args.target, problems_dir=problem_root(args), prompts_dir=args.prompts_dir,
                      backend=args.backend, run=args.run)
    toolbox = Toolbox(serving, settings, Budget(calls=args.budget_calls, seconds=args.budget_s))
    sanitize.require(settings.sanitize, toolbox.target)  # every evaluation it serves would be sanitized
    where = "stdio" if args.transport == "stdio" else f"http://{args.host}:{args.port}/mcp"
    err.print(f"[dim]harness mcp: {len(toolbox.problems)} {toolbox.target} problems over {where}; budget "
              f"{args.budget_calls} calls, {args.budget_s:g} s; results in {settings.db}, run {toolbox.run}[/]")
    serve(toolbox, transport="stdio" if args.transport == "stdio" else "http", host=args.host, port=args.port)
    return 0
