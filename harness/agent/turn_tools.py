"""The tools a turn of `harness run --tools N` may call before its answer: `evaluate(source)`, `profile(source)` and,
on a GPU, `sanitize(source)` on the conversation's own problem, through the toolbox (stored under the run's
companion RUN-tools, so the run's board holds its answers alone). The model is answered with what the MCP tools
answer, and the calls left."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harness.agent.budget import Budget, ToolError
from harness.agent.toolbox import Serving, Toolbox
from harness.config import Settings
from harness.llm.loop import RunConfig
from harness.types import DeviceInfo, Problem

SOURCE = {"type": "object", "additionalProperties": False, "required": ["source"],
          "properties": {"source": {"type": "string", "description": "The complete Python file defining ModelNew"}}}
EVALUATE = {
    "type": "function",
    "function": {
        "name": "evaluate",
        "description": "Build, check and time a candidate on this problem, as your final answer will be: the verdict "
                       "(status, speedup, errors, per-workload results; held-out workloads by description only) and "
                       "what to fix. Each call spends one of the turn's tool calls.",
        "parameters": SOURCE,
    },
}


PROFILE = {
    "type": "function",
    "function": {
        "name": "profile",
        "description": "Where a candidate's time goes on this problem: its kernels and PyTorch's operators with their "
                       "times and shares of one profiled forward, the rate it reaches against the speed of light, "
                       "and on a GPU with Nsight Compute per kernel its duration, DRAM bytes, compute and memory "
                       "throughput (% of peak), occupancy and registers. Each call spends one of the turn's tool "
                       "calls.",
        "parameters": SOURCE,
    },
}


SANITIZE = {
    "type": "function",
    "function": {
        "name": "sanitize",
        "description": "NVIDIA's compute-sanitizer (memcheck: accesses out of bounds or misaligned) over one checked "
                       "call of a candidate on this problem: the verdict, with the tool's error count and first lines "
                       "under `sanitizer`; any error makes it runtime_error, as it would your final answer under "
                       "--sanitize. Each call spends one of the turn's tool calls.",
        "parameters": SOURCE,
    },
}


class TurnTools:
    def __init__(self, toolbox: Toolbox):
        self.toolbox = toolbox

    @classmethod
    def for_run(cls, name: str, config: RunConfig, device: DeviceInfo, settings: Settings,
                problems_dir: str | Path | None) -> TurnTools | None:
        """A run's tools (`--tools N`), None without: evaluations stored under the hidden run NAME-tools."""
        if not config.tool_calls:
            return None
        serving = Serving(target=device.target, problems_dir=Path(problems_dir) if problems_dir else None,
                          prompts_dir=Path(config.prompts_dir) if config.prompts_dir else None,
                          backend=config.backend, run=f"{name}-tools", kind="tools", hidden=True)
        return cls(Toolbox(serving, settings, Budget()))

    def schemas(self) -> list[dict]:
        """evaluate and profile; sanitize too on a GPU (compute-sanitizer checks CUDA kernels)."""
        return [EVALUATE, PROFILE, *([SANITIZE] if self.toolbox.target == "cuda" else [])]

    async def call(self, problem: Problem, name: str, arguments: str, left: int) -> tuple[str, bool]:
        try:
            offered = {schema["function"]["name"] for schema in self.schemas()}
            tool = {"evaluate": self.toolbox.evaluate_problem, "profile": self.toolbox.profile_problem,
                    "sanitize": self.toolbox.sanitize_problem}.get(name) if name in offered else None
            if tool is None:
                raise ToolError(f"there is no tool {name!r}; the tools are "
                                + ", ".join(f"{tool}(source)" for tool in sorted(offered)))
            try:
                source = json.loads(arguments or "{}")["source"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ToolError(f"{name} takes one argument, source: the complete Python file as a JSON string "
                                f"(got {arguments[:200]!r})") from None
            answer = await asyncio.to_thread(tool, problem, source, Budget(calls=left + 1))
        except ToolError as exc:
            return str(exc), True
        answer.pop("run")  # the model's calls are stored beside its run: nothing it needs
        return json.dumps(answer), False
