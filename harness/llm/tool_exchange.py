"""A turn in which the model may call tools before it answers (`harness run --tools N`): requests with OpenAI's
function tools, each call answered by the ToolSet, until the model answers in text. The turn's N calls are its
budget: a call past them is answered that the calls are spent, and the next request lets the model call none. The
turn's Completion is the final answer, with every call in `tool_steps` and the tokens and seconds of every request."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from harness.completions import Completion, CompletionRequest, ToolStep, Usage
from harness.types import Problem

Requester = Callable[[list[dict], str, dict, float], Awaitable[tuple[Completion, Any]]]


class ToolSet(Protocol):
    def schemas(self) -> list[dict]:
        """The tools, as OpenAI's `tools` parameter lists them."""

    async def call(self, problem: Problem, name: str, arguments: str, left: int) -> tuple[str, bool]:
        """What the model is told of one call on `problem` (`left`: the turn's calls left after it), and whether it
        was refused or failed."""


def spent(calls: int) -> str:
    return (f"The turn's {calls} tool call{'s' if calls != 1 else ''} are spent: answer now with the complete Python "
            "file defining ModelNew in one ```python code block.")


async def tool_exchange(request: CompletionRequest, problem: Problem, tools: ToolSet, params: dict,
                        send: Requester) -> Completion:
    start = time.monotonic()
    messages: list[dict] = list(request.messages)
    steps: list[ToolStep] = []
    usage, attempts = Usage(), 0
    completion = Completion(text="")
    for _ in range(request.tool_calls + 2):  # every call, then the answer; one more for a model that calls anyway
        choice = "auto" if len(steps) < request.tool_calls else "none"
        completion, message = await send(messages, request.model, {**params, "tools": tools.schemas(),
                                                                     "tool_choice": choice}, start)
        usage, attempts = add(usage, completion.usage), attempts + completion.attempts
        calls = list(getattr(message, "tool_calls", None) or []) if completion.error is None else []
        if not calls:
            break
        messages.append({"role": "assistant", "content": getattr(message, "content", None) or "",
                         "tool_calls": [{"id": c.id, "type": "function",
                                         "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                        for c in calls]})
        for call in calls:
            steps.append(await one_call(tools, problem, call.function.name, call.function.arguments,
                                        request.tool_calls - len(steps), request.tool_calls))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": steps[-1].result})
    else:
        completion = completion.model_copy(update={"text": ""})  # it kept calling: no answer
    return completion.model_copy(update={"usage": usage, "attempts": attempts, "tool_steps": tuple(steps),
                                         "duration_s": time.monotonic() - start})


async def one_call(tools: ToolSet, problem: Problem, name: str, arguments: str, left: int,
                   calls: int) -> ToolStep:
    """`left`: the turn's calls left before this one, of its `calls`."""
    if left <= 0:
        return ToolStep(name=name, arguments=arguments, result=spent(calls), error=True)
    started = time.monotonic()
    result, error = await tools.call(problem, name, arguments, left - 1)
    return ToolStep(name=name, arguments=arguments, result=result, error=error,
                    seconds=round(time.monotonic() - started, 3))


def add(a: Usage, b: Usage) -> Usage:
    return Usage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                 completion_tokens=a.completion_tokens + b.completion_tokens,
                 reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens)
