import email.utils
import hashlib
import json
import time

from harness.completions import CompletionRequest, Sampling
from harness.llm.providers import RetryPolicy, redact_url, retry_after_s


def test_retry_after_seconds_or_http_date():
    assert retry_after_s({"retry-after": "3"}) == 3.0
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s({"retry-after": date}) <= 31
    assert retry_after_s({"retry-after": "soon"}) is None and retry_after_s({}) is None


def test_backoff_is_exponential_jittered_and_capped():
    policy = RetryPolicy(base_s=1.0, cap_s=10.0)
    assert all(0 <= policy.delay_s(1, None) <= 1 for _ in range(50))
    assert all(0 <= policy.delay_s(3, None) <= 4 for _ in range(50))
    assert max(policy.delay_s(10, None) for _ in range(200)) <= 10
    assert len({policy.delay_s(3, None) for _ in range(20)}) > 1  # jitter
    assert policy.delay_s(1, 7.0) == 7.0 and policy.delay_s(1, 99.0) == 10.0


def test_credentials_are_removed_from_urls():
    assert redact_url("https://user:pw@host:8000/v1") == "https://host:8000/v1"
    assert redact_url("http://localhost:11434/v1") == "http://localhost:11434/v1"


def test_request_key_covers_model_messages_sampling_and_sample():
    base = CompletionRequest(model="m", messages=({"role": "user", "content": "x"},), sample=1)
    variants = [base.model_copy(update={"model": "n"}), base.model_copy(update={"sample": 2}),
                base.model_copy(update={"sampling": Sampling(temperature=0.5)}),
                base.model_copy(update={"messages": ({"role": "user", "content": "y"},)})]
    assert len({base.key, *(v.key for v in variants)}) == 5
    assert base.key == CompletionRequest(model="m", messages=({"role": "user", "content": "x"},), sample=1).key


def test_a_request_offering_tools_keys_apart_and_one_without_keys_as_before_tools():
    base = CompletionRequest(model="m", messages=({"role": "user", "content": "x"},), sample=1)
    before = {"model": "m", "messages": [{"role": "user", "content": "x"}], "sample": 1,
              "sampling": Sampling().model_dump(mode="json")}  # the fields a request had before tools
    assert base.key == hashlib.sha256(json.dumps(before, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    tooled = [base.model_copy(update={"tools": ("evaluate",), "tool_calls": n}) for n in (1, 2)]
    assert len({base.key, *(t.key for t in tooled)}) == 3  # a cached answer without tools never serves one with
