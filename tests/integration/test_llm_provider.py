"""The OpenAI-compatible provider against a real local HTTP server, through the real openai client."""
import asyncio
import time

import pytest

from harness.completions import CompletionRequest, Sampling
from harness.llm.providers import OpenAIProvider, ProviderError, RetryPolicy
from harness.types import Problem
from tests.openai_server import FakeOpenAI, Reply

PROBLEM = Problem(id="cpu/relu", path="/nonexistent", level=None, sha256="0" * 64, source="", description="")
KEY = "sk-test-0123456789abcdefSECRET"


def script(*replies):
    """A responder that plays `replies` in order, then answers 'done'."""
    queue = list(replies)
    return lambda body: queue.pop(0) if queue else "done"


def ask(server, *, timeout_s=5.0, retries=4, base_s=0.05, sampling=None):
    async def go():
        provider = OpenAIProvider("scripted", base_url=server.base_url, api_key=KEY, timeout_s=timeout_s,
                                  retry=RetryPolicy(max_retries=retries, base_s=base_s))
        try:
            request = CompletionRequest(model="scripted", messages=({"role": "user", "content": "hi"},),
                                        sampling=sampling or Sampling(), sample=1)
            return await provider.complete(request, PROBLEM)
        finally:
            await provider.close()
    return asyncio.run(go())


def test_answer_usage_key_and_sampling_parameters():
    with FakeOpenAI(script(Reply("hello", finish_reason="length"))) as server:
        completion = ask(server, sampling=Sampling(temperature=0.3, max_completion_tokens=4096,
                                                   reasoning_effort="high"))
    assert completion.text == "hello" and completion.finish_reason == "length" and completion.attempts == 1
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert server.authorization == [f"Bearer {KEY}"]
    (body,) = server.received
    assert body["temperature"] == 0.3 and body["max_completion_tokens"] == 4096 and body["reasoning_effort"] == "high"
    assert "top_p" not in body and "max_tokens" not in body  # unset parameters are not sent


def test_429_honours_retry_after():
    with FakeOpenAI(script(Reply(status=429, headers={"Retry-After": "1"}), "ok")) as server:
        start = time.monotonic()
        completion = ask(server, base_s=0.01)  # backoff alone would retry after at most 10 ms
        elapsed = time.monotonic() - start
    assert completion.text == "ok" and completion.attempts == 2 and len(server.received) == 2
    assert elapsed >= 0.95


@pytest.mark.parametrize("fault", [
    Reply(status=500), Reply(status=503), Reply(drop=True), Reply(raw=b"{not json"),
    Reply(raw=b'{"object": "chat.completion", "choices": []}'), Reply("late", delay_s=2.0),
], ids=["500", "503", "dropped-connection", "malformed-json", "no-choices", "stall-past-timeout"])
def test_transient_faults_are_retried(fault):
    with FakeOpenAI(script(fault, "recovered")) as server:
        completion = ask(server, timeout_s=1.0)
    assert completion.text == "recovered" and completion.attempts == 2
    assert len(server.received) == 2  # the stalled request was abandoned, not waited for


def test_gives_up_after_the_retries():
    with FakeOpenAI(lambda body: Reply(status=500)) as server:
        with pytest.raises(ProviderError, match="gave up after 3 attempts"):
            ask(server, retries=2)
    assert len(server.received) == 3


def test_bad_key_is_fatal_and_never_echoed():
    echo = Reply(status=401, content=f"Incorrect API key provided: {KEY}.")
    with FakeOpenAI(script(echo)) as server:
        with pytest.raises(ProviderError, match="refused the credentials") as info:
            ask(server)
    assert KEY not in str(info.value) and len(server.received) == 1


def test_unknown_model_is_fatal():
    with FakeOpenAI(script(Reply(status=404, content="model 'scripted' not found"))) as server:
        with pytest.raises(ProviderError, match="Check --model and --base-url"):
            ask(server)


def test_a_refused_request_is_an_answer_with_an_error_not_a_crash():
    with FakeOpenAI(script(Reply(status=400, content="maximum context length exceeded"))) as server:
        completion = ask(server)
    assert completion.text == "" and "400" in completion.error and "context length" in completion.error
    assert len(server.received) == 1
