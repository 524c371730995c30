"""Providers: a request (messages + sampling) in, a Completion out.

`OpenAIProvider` talks to any OpenAI-compatible server through `openai.AsyncOpenAI`, with our own
retry loop (so every attempt is counted and `Retry-After` is honoured); `OfflineProvider` answers
with the hand-written solutions in solutions/reference/, so the loop runs with no model at all.
The response cache lives in the store and is applied by the loop (loop.py), not here.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from harness.completions import Completion, CompletionRequest, Usage
from harness.errors import HarnessError, InputError
from harness.llm.tool_exchange import ToolSet, tool_exchange
from harness.types import Backend, Frozen, Problem

PLACEHOLDER_KEY = "no-key"  # local servers (vLLM, Ollama, ...) want some key, any key


class ProviderError(HarnessError, RuntimeError):
    """The model server still fails after every retry."""


class ProviderConfigError(ProviderError, InputError):
    """The server refuses what we were told to use: the key, the model or the URL."""


class RetryPolicy(Frozen):
    max_retries: int = Field(default=6, ge=0, description="Retries after the first attempt")
    base_s: float = Field(default=1.0, gt=0, description="First backoff; doubles each retry, with full jitter")
    cap_s: float = Field(default=60.0, gt=0, description="Longest backoff, and longest Retry-After honoured")

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.cap_s)
        return random.uniform(0, min(self.cap_s, self.base_s * 2 ** (attempt - 1)))


class Provider(Protocol):
    name: str          # recorded as the run's model
    cacheable: bool    # whether its answers may be served from the response cache

    async def complete(self, request: CompletionRequest, problem: Problem,
                       tools: ToolSet | None = None) -> Completion: ...

    def source_path(self, problem: Problem) -> Path | None:
        """Where its answer for `problem` already is on disk (then no copy is written), if anywhere."""

    async def close(self) -> None: ...


def retry_after_s(headers) -> float | None:
    """Retry-After as seconds (it may be a number or an HTTP date)."""
    value = (headers or {}).get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def redact_url(url: str | None) -> str | None:
    """A base URL without user:password@ (it may carry credentials; it is stored and printed)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


class _Retryable(HarnessError):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIProvider:
    """Chat completions on an OpenAI-compatible endpoint."""

    cacheable = True

    def __init__(self, model: str, *, base_url: str | None, api_key: str, concurrency: int = 8,
                 timeout_s: float = 600.0, retry: RetryPolicy | None = None):
        self.name = model
        self.secret = api_key
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        import openai  # here, not at the top: its import costs ~2 s of CPU, which commands that ask no model skip

        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s)
        self.base_url = redact_url(str(self.client.base_url))
        self.limit = asyncio.Semaphore(concurrency)

    async def close(self) -> None:
        await self.client.close()

    def source_path(self, problem: Problem) -> Path | None:
        return None

    def _redact(self, text: str) -> str:
        # Servers echo keys in error messages ("Incorrect API key provided: sk-...").
        text = text.replace(self.secret, "***") if len(self.secret) >= 8 else text
        return re.sub(r"\bsk-[A-Za-z0-9_*-]{8,}", "sk-***", text)

    async def complete(self, request: CompletionRequest, problem: Problem, tools: ToolSet | None = None) -> Completion:
        params = {k: v for k, v in request.sampling.model_dump().items() if v is not None}
        if request.tools and tools is not None:
            return await tool_exchange(request, problem, tools, params, self._request)
        completion, _ = await self._request(list(request.messages), request.model, params, time.monotonic())
        return completion

    async def _request(self, messages: list[dict], model: str, params: dict, start: float) -> tuple[Completion, Any]:
        """One request, retried as the policy says: its Completion (timed from `start`) and the answer's message."""
        attempt = 0
        async with self.limit:
            while True:
                attempt += 1
                try:
                    return await self._attempt(messages, model, params, attempt, start)
                except _Retryable as exc:
                    if attempt > self.retry.max_retries:
                        raise ProviderError(f"{self.base_url}: {self._redact(str(exc))} "
                                            f"(gave up after {attempt} attempts)") from None
                    await asyncio.sleep(self.retry.delay_s(attempt, exc.retry_after))

    async def _attempt(self, messages: list[dict], model: str, params: dict, attempt: int,
                       start: float) -> tuple[Completion, Any]:
        import openai  # imported by __init__ already: this binds the name

        try:
            response = await self.client.chat.completions.create(
                # {role, content} dicts: what openai's message TypedDicts describe, with role a str, not a Literal
                model=model, messages=messages, **params)  # type: ignore[arg-type]
        except openai.APIStatusError as exc:
            status, detail = exc.status_code, self._redact(str(exc))
            if status == 429 or status >= 500 or status in (408, 409):
                raise _Retryable(f"HTTP {status}: {detail}", retry_after_s(exc.response.headers)) from None
            if status in (401, 403):
                raise ProviderConfigError(f"{self.base_url} refused the credentials (HTTP {status}): {detail}. "
                                    "Set OPENAI_API_KEY to a valid key.") from None
            if status == 404:
                raise ProviderConfigError(f"{self.base_url} has no model {model!r} or no chat completions "
                                    f"endpoint (HTTP 404): {detail}. Check --model and --base-url.") from None
            # 400, 413, 422, ...: this request is refused (too long a conversation, ...); others may pass.
            return Completion(text="", error=f"HTTP {status}: {detail}", attempts=attempt,
                              duration_s=time.monotonic() - start), None
        except openai.APITimeoutError:
            raise _Retryable(f"no answer within the {self.timeout_s:g} s request timeout") from None
        except openai.APIConnectionError as exc:
            raise _Retryable(f"connection failed: {self._redact(str(exc.__cause__ or exc))}") from None
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise _Retryable(f"malformed response: {exc}") from None
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise _Retryable(f"malformed response: no choices in {str(response)[:200]!r}")
        usage = getattr(response, "usage", None)
        details = getattr(usage, "completion_tokens_details", None)
        return Completion(
            text=choices[0].message.content or "", finish_reason=choices[0].finish_reason,
            usage=Usage(prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                        reasoning_tokens=getattr(details, "reasoning_tokens", 0) or 0),
            attempts=attempt, duration_s=time.monotonic() - start), choices[0].message


class OfflineProvider:
    """Answers each problem with its hand-written solutions/reference/<id>.py (Triton: solutions/reference/triton/
    <id>.py), as a model would."""

    NAMES = {"cuda": "offline:solutions/reference", "triton": "offline:solutions/reference/triton"}
    cacheable = False  # the files may change; reading them is free anyway

    def __init__(self, solutions_dir: Path, backend: Backend = "cuda"):
        self.solutions_dir = solutions_dir / "triton" if backend == "triton" else solutions_dir
        self.name = self.NAMES[backend]

    def source_path(self, problem: Problem) -> Path | None:
        if problem.id.endswith(".py"):
            return None
        path = self.solutions_dir / f"{problem.id}.py"
        return path if path.is_file() else None

    async def complete(self, request: CompletionRequest, problem: Problem, tools: ToolSet | None = None) -> Completion:
        path = self.source_path(problem)
        if path is None:
            return Completion(text=f"There is no reference solution for {problem.id}.", finish_reason="stop")
        return Completion(text=f"The reference solution ({path.name}):\n\n```python\n{path.read_text()}```\n",
                          finish_reason="stop")

    async def close(self) -> None:
        pass
