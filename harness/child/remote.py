"""The runner (runner.py), as its judge sees it: every request a round trip on the channel, every reply checked
before it is believed. A failure the runner reports ends the evaluation with its status, but never as the
harness's fault once the candidate's code may have run (a candidate cannot make its failure a harness_error,
which is retried and counted nowhere); a runner that goes away (a crash, os._exit) is the candidate's
runtime_error; a reply that breaks the protocol is the candidate's too.

The judge's own clock runs around every timed call (from telling the runner to go, its inputs made, to the reply):
what it saw beyond the runner's reported wall time is kept (`gaps_ms`), for the judge to set beside the same figure
of the reference's calls and the round trip alone (`round_trips`, before any candidate code is loaded).
"""

from __future__ import annotations

import math
import os
import time

import torch

from harness.child import device_share
from harness.child.channel import Channel, ChannelClosed, ChannelError
from harness.child.common import EvalFailure
from harness.child.timing import Sample
from harness.types import HARNESS_ERROR, Coverage

CANDIDATE_STATUSES = {"runtime_error", "compile_error", "incorrect", "rejected"}
JIT_STAGES = ("compile", "autotune")
_clock = time.perf_counter_ns


class RunnerOutput:
    """Stands for a timed call's output, kept in the runner until the judge asks for it."""


KEPT = RunnerOutput()


class Remote:
    def __init__(self, fd: int, device: torch.device):
        self.channel = Channel(fd)
        self.device = device
        self.started = False   # the runner said it is about to run the candidate's code
        self.gaps_ms: list[float] = []
        self.jit_seconds: dict[str, float] = {}
        self.ended = False     # the runner was told it is done (and may be gone)
        self.runner_start: dict[str, float] = {}

    def ask(self, message: dict | None, what: str) -> dict:
        """Send `message` (None: only wait) and return the reply; a descriptor sent with it is closed (only an
        output's file is read, through exchange())."""
        reply, fd = self.exchange(message, what)
        if fd is not None:
            os.close(fd)
        return reply

    def exchange(self, message: dict | None, what: str) -> tuple[dict, int | None]:
        """Send `message` (None: only wait) and return the reply and the descriptor that came with it (the caller
        closes it); the runner's failure as an EvalFailure."""
        try:
            if message is not None:
                self.channel.send(message)
            reply, fd = self.channel.receive()
        except ChannelError as exc:
            raise self.gone(what, exc) from None
        failure = reply.get("failure")
        if failure is not None:
            if fd is not None:
                os.close(fd)
            self.ended = True  # a runner ends after its failure
            raise self.failed(failure)
        return reply, fd

    def gone(self, what: str, exc: ChannelError) -> EvalFailure:
        status = "runtime_error" if self.started else HARNESS_ERROR
        prefix = "" if self.started else "harness error: "
        if isinstance(exc, ChannelClosed):
            return EvalFailure(status, f"{prefix}the candidate's process ended before reporting a result {what}")
        return EvalFailure(status, f"{prefix}the candidate's process broke the protocol {what}: {exc}")

    def failed(self, failure: object) -> EvalFailure:
        if not isinstance(failure, dict) or not isinstance(failure.get("message"), str):
            return EvalFailure("runtime_error", "the candidate's process sent a malformed failure")
        status, message = failure.get("status"), failure["message"][:4000]
        if status == HARNESS_ERROR and not self.started:
            return EvalFailure(HARNESS_ERROR, message)
        return EvalFailure(status if status in CANDIDATE_STATUSES else "runtime_error", message)

    def expect(self, event: str, what: str) -> None:
        self.expect_reply(None, event, what)

    def expect_reply(self, message: dict | None, event: str, what: str) -> None:
        if self.ask(message, what).get("event") != event:
            raise EvalFailure("runtime_error", f"the candidate's process answered out of turn {what}")

    # ---- requests ----

    def round_trips(self, count: int) -> list[float]:
        """`count` empty round trips (ms), asked before the runner holds any code of the candidate's: what a timed
        call's reply costs beyond its own time, measured where the candidate cannot slow it down."""
        times = []
        for _ in range(count):
            start = _clock()
            self.expect_reply({"op": "ping"}, "pong", "while it started")
            times.append((_clock() - start) / 1e6)
        return times

    def setup(self, spec: dict) -> None:
        """Tell the runner what to load; on a GPU whose driver can lend memory, its outputs cross device to
        device (channel.py)."""
        ordinal = self.device.index or 0
        crosses = self.device.type == "cuda" and device_share.supported(ordinal)
        self.channel.send({"op": "setup", **spec, "device_outbox": ordinal if crosses else None})

    def constructed(self) -> None:
        """The runner's ready (with how its own start went, kept in `runner_start`: figures it sends before any
        code of the candidate's runs), then its constructed."""
        reply = self.ask(None, "while it started")
        if reply.get("event") != "ready":
            raise EvalFailure("runtime_error", "the candidate's process answered out of turn while it started")
        started = reply.get("started")
        self.runner_start = {key: float(value) for key, value in started.items()
                             if key in ("ready_s", "imports_s", "device_s", "device_attempts", "triton_s")
                             and type(value) in (int, float)
                             and 0 <= value < 1e6} if isinstance(started, dict) else {}
        self.started = True
        self.expect("constructed", "while ModelNew was constructed")

    def workload(self, values: dict, distribution: tuple[float, float], what: str) -> None:
        """Have the runner make its inputs from these constants (and its ModelNew from them, where they change the
        init inputs) until told otherwise."""
        self.expect_reply({"op": "workload", "values": values, "distribution": list(distribution), "what": what},
                          "workload", f"({what})")

    def value(self, message: dict, what: str, expected: object) -> object:
        reply, fd = self.exchange(message, f"({what})")
        return self.decoded(reply, fd, what, expected)

    def decoded(self, reply: dict, fd: int | None, what: str, expected: object) -> object:
        try:
            if "value" not in reply:
                raise EvalFailure("runtime_error", f"the candidate's process sent no output ({what})")
            return self.channel.decode(reply["value"], fd, expected, self.device, reply.get("box"))
        except ChannelError as exc:
            raise EvalFailure("runtime_error", f"the candidate's process sent a malformed output ({what}): {exc}") \
                from None
        finally:
            if fd is not None and "value" not in reply:
                os.close(fd)

    def call(self, seed: int, poison: bool, what: str, expected: object) -> object:
        """One checked forward on the inputs of `seed`: its output, read as `expected` allows (channel.decode)."""
        return self.value({"op": "call", "seed": seed, "poison": poison, "what": what}, what, expected)

    def settled(self, what: str) -> bool:
        """Whether the last checked output is unchanged since forward returned."""
        reply = self.ask({"op": "settled"}, f"({what})")
        return reply.get("changed") is False

    def profile(self, seed: int) -> Coverage:
        reply = self.ask({"op": "profile", "seed": seed}, "(the profiled call)")
        try:
            return Coverage.model_validate(reply.get("coverage"))
        except ValueError:
            raise EvalFailure("runtime_error", "the candidate's process sent a malformed coverage") from None

    def timer(self, _call, args: list) -> Sample:
        """time_interleaved's timer for the candidate's side: `args` is [the call's seed]. The runner makes the
        inputs, says it is ready, and times the call when told to go: this process's clock runs from `go` to the
        reply."""
        self.expect_reply({"op": "time", "seed": args[0]}, "armed", "(while timing)")
        start = _clock()
        reply = self.ask({"op": "go"}, "(while timing)")
        outside_ms = (_clock() - start) / 1e6
        event_ms, wall_ms = reply.get("event_ms"), reply.get("wall_ms")
        if not all(type(x) is float and math.isfinite(x) and 0 <= x for x in (event_ms, wall_ms)) or \
                (self.device.type == "cpu" and event_ms != wall_ms):  # the cpu's timer has one clock
            raise EvalFailure("runtime_error", "the candidate's process sent malformed times")
        self.gaps_ms.append(outside_ms - wall_ms)
        return Sample(event_ms, wall_ms, KEPT)

    def output(self, what: str, expected: object) -> tuple[object, float]:
        """The kept output of the last timed call, and the milliseconds from asking to its arrival (before the
        judge reads it): an output whose work was left until it was read takes that work's time to arrive."""
        reply, fd, handover_ms = self.timed_exchange({"op": "output", "what": what}, f"({what})")
        return self.decoded(reply, fd, what, expected), handover_ms

    def timed_exchange(self, message: dict, what: str) -> tuple[dict, int | None, float]:
        start = _clock()
        reply, fd = self.exchange(message, what)
        return reply, fd, (_clock() - start) / 1e6

    def ticks(self) -> int:
        reply = self.ask({"op": "ticks"}, "(ticks)")
        ticks = reply.get("ticks")
        return ticks if type(ticks) is int and ticks >= 0 else 0

    def jit(self) -> dict[str, float]:
        """Triton's compile and autotune seconds in the runner so far (kept from the last answer if it is gone)."""
        if self.ended:
            return self.jit_seconds
        try:
            reply = self.ask({"op": "jit"}, "(jit)")
        except EvalFailure:
            return self.jit_seconds
        seconds = reply.get("seconds")
        if isinstance(seconds, dict):
            self.jit_seconds = {k: float(v) for k, v in seconds.items()
                                if k in JIT_STAGES and type(v) in (int, float) and 0 <= v < 1e6}
        return self.jit_seconds

    def end(self) -> None:
        self.jit()
        self.ask({"op": "end"}, "(at the end)")
        self.ended = True
