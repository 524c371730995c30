"""The tools a turn of `harness run --tools N` may call before its answer: `evaluate(source)` on the conversation's
own problem, the toolbox's evaluation (stored under the run's companion RUN-tools, so the run's board holds its
answers alone). The model is answered with the verdict record, the feedback and the calls left."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harness.agent.budget import Budget, ToolError
from harness.agent.toolbox import Serving, Toolbox
from harness.config import Settings
from harness.llm.loop import RunConfig
from harness.types import DeviceInfo, Problem

EVALUATE = {
    "type": "function",
    "function": {
        "name": "evaluate",
        "description": "Build, check and time a candidate on this problem, as your final answer will be: the verdict "
                       "(status, speedup, errors, per-workload results; held-out workloads by description only) and "
                       "what to fix. Each call spends one of the turn's tool calls.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["source"],
                       "properties": {"source": {"type": "string", "description": "The complete Python file "
                                                 "defining ModelNew"}}},
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
        return [EVALUATE]

    async def call(self, problem: Problem, name: str, arguments: str, left: int) -> tuple[str, bool]:
        try:
            if name != "evaluate":
                raise ToolError(f"there is no tool {name!r}; the tool is evaluate(source)")
            try:
                source = json.loads(arguments or "{}")["source"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ToolError("evaluate takes one argument, source: the complete Python file as a JSON string "
                                f"(got {arguments[:200]!r})") from None
            answer = await asyncio.to_thread(self.toolbox.evaluate_problem, problem, source, Budget(calls=left + 1))
        except ToolError as exc:
            return str(exc), True
        return json.dumps({key: answer[key] for key in ("verdict", "feedback", "budget")}), False
