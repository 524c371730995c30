"""What a model is asked and what it answers: a request's sampling parameters and messages (its key names the answer
in the response cache), and the completion with its token usage."""

from __future__ import annotations

import hashlib
import json

from pydantic import Field

from harness.records import Frozen


class Sampling(Frozen):
    """Sampling parameters sent with every request; None means 'not sent' (the server's default)."""

    temperature: float | None = Field(default=None, description="Sampling temperature")
    top_p: float | None = Field(default=None, description="Nucleus sampling mass")
    max_tokens: int | None = Field(default=None, description="Completion token cap (classic models)")
    max_completion_tokens: int | None = Field(default=None, description="Token cap incl. reasoning (reasoning models)")
    reasoning_effort: str | None = Field(default=None, description="low / medium / high (reasoning models)")


class CompletionRequest(Frozen):
    """One chat request. Its key identifies the answer in the response cache."""

    model: str = Field(description="Model name as the server knows it")
    messages: tuple[dict[str, str], ...] = Field(description="Chat messages: {role, content}")
    sampling: Sampling = Field(default_factory=Sampling, description="Sampling parameters")
    sample: int = Field(description="Sample index (1-based): distinct samples of the same conversation")
    tools: tuple[str, ...] = Field(default=(), description="The tools the model may call before it answers")
    tool_calls: int = Field(default=0, ge=0, description="How many tool calls the turn may make")

    @property
    def key(self) -> str:
        fields = self.model_dump(mode="json")
        if not self.tools:  # a request without tools keys as it did before tools existed: its cached answers serve
            del fields["tools"], fields["tool_calls"]
        payload = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()


class Usage(Frozen):
    """Token counts the server reported for one request."""

    prompt_tokens: int = Field(default=0, description="Input tokens")
    completion_tokens: int = Field(default=0, description="Output tokens, reasoning included")
    reasoning_tokens: int = Field(default=0, description="Of which reasoning tokens, when reported")


class ToolStep(Frozen):
    """One tool call a model made before its answer, and what it was told."""

    name: str = Field(description="The tool called")
    arguments: str = Field(description="Its arguments, as the model wrote them (JSON text)")
    result: str = Field(description="What the model was answered (JSON text, or the error's words)")
    error: bool = Field(default=False, description="The call was refused or failed: `result` says why")
    seconds: float = Field(default=0.0, description="Wall time the tool took")


class Completion(Frozen):
    """A model's answer to one request (or why there is none)."""

    text: str = Field(description="The assistant message content ('' when none)")
    finish_reason: str | None = Field(default=None, description="stop, length, ... as the server said")
    usage: Usage = Field(default_factory=Usage, description="Token usage of this request")
    attempts: int = Field(default=1, description="HTTP attempts it took, retries included")
    duration_s: float = Field(default=0.0, description="Wall time of the request, retries included")
    error: str | None = Field(default=None, description="Why the server refused the request (4xx), or None")
    cached: bool = Field(default=False, description="Served from the response cache, not paid again")
    tool_steps: tuple[ToolStep, ...] = Field(default=(), description="The tool calls made before the answer, in "
                                             "order (usage and duration count every request of the exchange)")

    @property
    def tool_s(self) -> float:
        return sum(step.seconds for step in self.tool_steps)
