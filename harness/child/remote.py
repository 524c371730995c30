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
from typing import TypeVar, cast

import torch

from harness.child import device_share
from harness.child import runner_protocol as messages
from harness.child.channel import Channel, ChannelClosed, ChannelError
from harness.child.common import EvalFailure
from harness.child.timing import Sample
from harness.evidence import Coverage
from harness.types import HARNESS_ERROR, Status

CANDIDATE_STATUSES = {"runtime_error", "compile_error", "incorrect", "rejected"}
JIT_STAGES = ("compile", "autotune")
RUNNER_START = ("ready_s", "imports_s", "device_s", "device_attempts", "triton_s")
_clock = time.perf_counter_ns
R = TypeVar("R", bound=messages.Reply)


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
        self.runner_memory_mib: int | None = None  # as the runner said at the end (its candidate may change it)

    def ask(self, request: messages.Request | None, kind: type[R], what: str) -> R:
        """Send `request` (None: only wait) and return the reply, which must be a `kind`; a descriptor sent with it
        is closed (only an output's file is read, through exchange())."""
        return self.read(self.closed(*self.exchange(None if request is None else request.wire(), what)), kind, what)

    def maybe(self, request: messages.Request, kind: type[R], what: str) -> R | None:
        """ask(), where a reply that is not a `kind` is None (the caller's figure then says nothing)."""
        return self.parsed(self.closed(*self.exchange(request.wire(), what)), kind)

    def exchange(self, message: dict | None, what: str) -> tuple[dict, int | None]:
        """Send `message` (a request's wire form; None: only wait) and return the reply and the descriptor that came
        with it (the caller closes it); the runner's failure as an EvalFailure."""
        try:
            if message is not None:
                self.channel.send(message)
            reply, fd = self.channel.receive()
        except ChannelError as exc:
            raise self.gone(what, exc) from None
        if reply.get(messages.EVENT) == messages.Failure.NAME:
            self.closed(reply, fd)
            self.ended = True  # a runner ends after its failure
            raise self.failed(reply)
        return reply, fd

    def timed_exchange(self, request: messages.Request, what: str) -> tuple[dict, int | None, float]:
        """exchange(), and the milliseconds from sending to the reply (the request made before the clock starts, the
        reply read after it stops)."""
        message = request.wire()
        start = _clock()
        reply, fd = self.exchange(message, what)
        return reply, fd, (_clock() - start) / 1e6

    @staticmethod
    def closed(reply: dict, fd: int | None) -> dict:
        if fd is not None:
            os.close(fd)
        return reply

    @staticmethod
    def parsed(reply: dict, kind: type[R]) -> R | None:
        try:
            return kind.read(reply)
        except messages.MalformedMessage:
            return None

    @staticmethod
    def read(reply: dict, kind: type[R], what: str) -> R:
        try:
            return kind.read(reply)
        except messages.MalformedMessage:
            raise EvalFailure("runtime_error", f"the candidate's process answered out of turn {what}") from None

    def gone(self, what: str, exc: ChannelError) -> EvalFailure:
        status: Status = "runtime_error" if self.started else HARNESS_ERROR
        prefix = "" if self.started else "harness error: "
        if isinstance(exc, ChannelClosed):
            return EvalFailure(status, f"{prefix}the candidate's process ended before reporting a result {what}")
        return EvalFailure(status, f"{prefix}the candidate's process broke the protocol {what}: {exc}")

    def failed(self, reply: dict) -> EvalFailure:
        try:
            failure = messages.Failure.read(reply)
        except messages.MalformedMessage:
            return EvalFailure("runtime_error", "the candidate's process sent a malformed failure")
        status, message = failure.status, failure.message[:4000]
        if status == HARNESS_ERROR and not self.started:
            return EvalFailure(HARNESS_ERROR, message)
        return EvalFailure(cast(Status, status) if status in CANDIDATE_STATUSES else "runtime_error", message)

    # ---- requests (runner_protocol.py declares each, runner.py serves it) ----

    def round_trips(self, count: int) -> list[float]:
        """`count` empty round trips (ms), asked before the runner holds any code of the candidate's: what a timed
        call's reply costs beyond its own time, measured where the candidate cannot slow it down."""
        times = []
        for _ in range(count):
            reply, fd, ms = self.timed_exchange(messages.Ping(), "while it started")
            self.read(self.closed(reply, fd), messages.Pong, "while it started")
            times.append(ms)
        return times

    def setup(self, spec: dict, device_outbox: bool = True) -> None:
        """Tell the runner what to load (Setup's fields but the outbox); on a GPU whose driver can lend memory, its
        outputs cross device to device (channel.py), unless `device_outbox` is off."""
        ordinal = self.device.index or 0
        crosses = device_outbox and self.device.type == "cuda" and device_share.supported(ordinal)
        self.channel.send(messages.Setup(**spec, device_outbox=ordinal if crosses else None).wire())

    def constructed(self) -> list:
        """The runner's ready (with how its own start went, kept in `runner_start`: figures it sends before any
        code of the candidate's runs), then its constructed, with ModelNew's [name, shape] parameters (a training
        problem's; else empty)."""
        started = self.ask(None, messages.Ready, "while it started").started
        self.runner_start = {key: float(value) for key, value in started.items()
                             if key in RUNNER_START and type(value) in (int, float) and 0 <= value < 1e6}
        self.started = True
        return self.ask(None, messages.Constructed, "while ModelNew was constructed").parameters

    def workload(self, values: dict, distribution: tuple[float, float], what: str) -> None:
        """Have the runner make its inputs from these constants (and its ModelNew from them, where they change the
        init inputs) until told otherwise."""
        request = messages.Workload(values=values, distribution=list(distribution), what=what)
        self.ask(request, messages.WorkloadMade, f"({what})")

    def decoded(self, reply: dict, fd: int | None, kind: type[messages.Reply], what: str, expected: object) -> object:
        """The output a `kind` reply carries, read as `expected` allows (channel.decode). Closes `fd`."""
        try:
            self.read(reply, kind, f"({what})")
            if "value" not in reply:
                raise EvalFailure("runtime_error", f"the candidate's process sent no output ({what})")
        except EvalFailure:
            self.closed(reply, fd)
            raise
        try:
            return self.channel.decode(reply["value"], fd, expected, self.device, reply.get("box"))
        except ChannelError as exc:
            raise EvalFailure("runtime_error", f"the candidate's process sent a malformed output ({what}): {exc}") \
                from None

    def call(self, seed: int, poison: bool, what: str, expected: object) -> object:
        """One checked forward on the inputs of `seed`: its output, read as `expected` allows (channel.decode)."""
        reply, fd = self.exchange(messages.Call(seed=seed, poison=poison, what=what).wire(), f"({what})")
        return self.decoded(reply, fd, messages.Called, what, expected)

    def settled(self, what: str) -> bool:
        """Whether the last checked output is unchanged since forward returned."""
        reply = self.maybe(messages.Settled(), messages.Settledness, f"({what})")
        return reply is not None and not reply.changed

    def profile(self, seed: int, upstream: list) -> Coverage:
        """The candidate's coverage on the inputs of `seed` (`upstream`: a training problem's upstream gradients'
        [shape, dtype]; else empty)."""
        reply = self.maybe(messages.Profile(seed=seed, upstream=upstream), messages.Profiled, "(the profiled call)")
        try:
            return Coverage.model_validate(reply.coverage if reply is not None else None)
        except ValueError:
            raise EvalFailure("runtime_error", "the candidate's process sent a malformed coverage") from None

    def timer(self, _call, args: list) -> Sample:
        """time_interleaved's timer for the candidate's side: `args` is [the call's seed, the upstream gradients'
        [shape, dtype] (a training problem's; else empty)]. The runner makes the inputs, says it is ready, and
        times the call when told to go: this process's clock runs from `go` to the reply."""
        self.ask(messages.Time(seed=args[0], upstream=args[1]), messages.Armed, "(while timing)")
        reply, fd, outside_ms = self.timed_exchange(messages.Go(), "(while timing)")
        times = self.parsed(self.closed(reply, fd), messages.Timed)
        if times is None or not all(math.isfinite(x) and 0 <= x for x in (times.event_ms, times.wall_ms)) or \
                (self.device.type == "cpu" and times.event_ms != times.wall_ms) or \
                (times.forward_ms is not None and not 0 <= times.forward_ms <= times.event_ms):
            # the cpu's timer has one clock; a forward half lies within its call
            raise EvalFailure("runtime_error", "the candidate's process sent malformed times")
        self.gaps_ms.append(outside_ms - times.wall_ms)
        return Sample(times.event_ms, times.wall_ms, KEPT, times.forward_ms)

    def output(self, what: str, expected: object) -> tuple[object, float]:
        """The kept output of the last timed call, and the milliseconds from asking to its arrival (before the
        judge reads it): an output whose work was left until it was read takes that work's time to arrive."""
        reply, fd, handover_ms = self.timed_exchange(messages.Output(what=what), f"({what})")
        return self.decoded(reply, fd, messages.Handed, what, expected), handover_ms

    def ticks(self) -> int:
        reply = self.maybe(messages.Ticks(), messages.OwnTicks, "(ticks)")
        return reply.ticks if reply is not None and reply.ticks >= 0 else 0

    def jit(self) -> dict[str, float]:
        """Triton's compile and autotune seconds in the runner so far (kept from the last answer if it is gone)."""
        if self.ended:
            return self.jit_seconds
        try:
            reply = self.maybe(messages.Jit(), messages.JitSeconds, "(jit)")
        except EvalFailure:
            return self.jit_seconds
        if reply is not None:
            self.jit_seconds = {k: float(v) for k, v in reply.seconds.items()
                                if k in JIT_STAGES and type(v) in (int, float) and 0 <= v < 1e6}
        return self.jit_seconds

    def end(self) -> None:
        self.jit()
        ended = self.ask(messages.End(), messages.Ended, "(at the end)")
        self.runner_memory_mib = ended.memory_mib if ended.memory_mib >= 0 else None
        self.ended = True
