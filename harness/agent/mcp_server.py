"""`harness mcp`: the toolbox as a Model Context Protocol server (the `mcp` SDK's MCPServer), over stdio or streamable
HTTP on a local port. A tool's ToolError reaches the agent as an error result with its words; the server goes on."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import Any

from harness.agent.budget import ToolError
from harness.agent.toolbox import Toolbox
from harness.errors import InputError

INSTRUCTIONS = (
    "Kernel evaluation: list_problems gives the problems; show_problem gives one as a model is asked it (a PyTorch "
    "Model to make faster with a ModelNew of your own kernels); evaluate builds, checks and times a complete Python "
    "file defining ModelNew against it, in a sandbox, on workloads some of which are held out, and answers with the "
    "verdict and what to fix; profile says where a candidate's time goes; sanitize runs compute-sanitizer over one "
    "checked call (on a GPU). Calls to evaluate, profile and sanitize are limited: each answer says what is left.")


class MissingSDK(InputError):
    """The `mcp` package is not installed."""


def require_sdk() -> None:
    if importlib.util.find_spec("mcp") is None:
        raise MissingSDK("harness mcp needs the Model Context Protocol SDK: pip install 'kernel-harness[mcp]' "
                         "(or pip install 'mcp>=2')")


def server(toolbox: Toolbox):
    """The MCPServer with the toolbox's tools."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

    def served(tool: Callable[..., dict]) -> Callable[..., dict]:
        def call(**arguments: Any) -> dict:
            try:
                return tool(**arguments)
            except ToolError as exc:
                raise SDKToolError(str(exc)) from None
            except InputError as exc:  # a bad problem file or prompt directory: the server's, said to the agent
                raise SDKToolError(f"the server cannot serve this: {exc}") from None
        return call

    mcp = MCPServer(name="kernel-harness", instructions=INSTRUCTIONS)

    @mcp.tool(description="The problems this server evaluates (id, level, description, tags, how many workloads are "
                          "public and held out). `problems`: comma-separated ids or sets (level1, cpu) to list only "
                          "those; empty for all.")
    def list_problems(problems: str = "") -> dict:
        return served(toolbox.list_problems)(problems=problems)

    @mcp.tool(description="One problem as a model is asked it: the system and user messages (the reference Model's "
                          "source, the target's facts, the tolerance), its public workloads, and how many are held "
                          "out.")
    def show_problem(problem: str) -> dict:
        return served(toolbox.show_problem)(problem=problem)

    @mcp.tool(description="Build, check and time a candidate on a problem, as `harness eval` does: `source` is the "
                          "complete Python file defining ModelNew. Answers with the verdict record (status, speedup, "
                          "errors, flags, per-workload results; held-out workloads by their description only) and "
                          "the feedback text. Spends one call of the budget.")
    def evaluate(problem: str, source: str) -> dict:
        return served(toolbox.evaluate)(problem=problem, source=source)

    @mcp.tool(description="Where a candidate's time goes: its kernels and PyTorch's operators with their times and "
                          "shares of one profiled forward, its time against the reference, and the rate it reaches "
                          "(GB/s, TFLOP/s) against the problem's speed of light; on a GPU with Nsight Compute, per "
                          "kernel its duration, DRAM bytes, compute and memory throughput (% of peak), occupancy "
                          "and registers. Evaluates the candidate as evaluate does (a source evaluated before is "
                          "served from the store); spends one call.")
    def profile(problem: str, source: str) -> dict:
        return served(toolbox.profile)(problem=problem, source=source)

    @mcp.tool(description="NVIDIA's compute-sanitizer over one checked call of a candidate on a problem (a server "
                          "with a GPU): `tool` memcheck (accesses out of bounds or misaligned; the default) or "
                          "racecheck (shared-memory races). Answers with the verdict record, whose `sanitizer` holds "
                          "the tool's error count and its first lines; any error makes the verdict runtime_error, "
                          "even where the outputs matched. Evaluates the candidate as evaluate does; spends one call.")
    def sanitize(problem: str, source: str, tool: str = "memcheck") -> dict:
        return served(toolbox.sanitize)(problem=problem, source=source, tool=tool)

    return mcp


def serve(toolbox: Toolbox, *, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765) -> None:
    """Until the client closes stdio (or the process is stopped). Stdout is the protocol's: the SDK logs to stderr."""
    require_sdk()
    logging.getLogger("mcp").setLevel(logging.WARNING)
    mcp = server(toolbox)
    if transport == "stdio":
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host=host, port=port)
