"""The judge-runner protocol, declared once: every request the judge (remote.py) may send the runner (runner.py),
its fields, and the replies the runner answers it with. A message is one packet of the channel (channel.py): a
request is {"op": its name, its fields}, a reply {"event": its name, its fields}, and a reply that carries an output
has it beside its fields (the channel's `value`, its tensors in the shared file). The runner may answer any request
with a Failure instead, and then ends.

Both ends make and read messages through these records only. Reading checks the name, that every field is there
and each one's type (exactly: a bool is not an int), and ignores other keys. Messages sit at the edges of the judge's
clock, so they are plain frozen dataclasses: making a Call's wire form or reading one took about 1 us each on the
2-core CI machine (pydantic's strict model: 0.9 us to read, 3.6 us to make and dump), beside 3.3 us for the channel's
JSON and some 20 us for a round trip; the timed requests are made before the judge's clock starts and their replies
read after it stops. A reply is the runner's, which holds the candidate's code: the judge believes nothing of it
before reading it so, and checks its values after (remote.py).
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import ClassVar, TypeVar

from harness.errors import HarnessError

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pydantic's dependency, so always there
    from typing_extensions import dataclass_transform

OP, EVENT = "op", "event"
M = TypeVar("M", bound="Message")


class MalformedMessage(HarnessError):
    """A message that is not the one expected, lacks a field or has one of another type."""


@dataclass_transform(frozen_default=True)  # tells a type checker what _declare makes of each subclass
class Message:
    __slots__ = ()
    KEY: ClassVar[str]
    NAME: ClassVar[str]
    FIELDS: ClassVar[tuple[tuple[str, tuple[type, ...]], ...]]

    def wire(self) -> dict:
        """What the channel sends: its name and its fields."""
        return {self.KEY: self.NAME, **{name: getattr(self, name) for name, _ in self.FIELDS}}

    @classmethod
    def read(cls: type[M], message: dict) -> M:
        """The message a received packet is, or MalformedMessage."""
        if message.get(cls.KEY) != cls.NAME:
            raise MalformedMessage(f"expected {cls.NAME}, got {message.get(cls.KEY)!r}")
        for name, kinds in cls.FIELDS:
            if type(message.get(name, _MISSING)) not in kinds:
                raise MalformedMessage(f"{cls.NAME}: a missing or malformed {name}")
        return cls(**{name: message[name] for name, _ in cls.FIELDS})


class Reply(Message):
    __slots__ = ()
    KEY = EVENT
    OUTPUT: ClassVar[bool] = False  # an output travels with it (the channel's value)


class Request(Message):
    __slots__ = ()
    KEY = OP
    REPLIES: ClassVar[tuple[type[Reply], ...]]  # what the runner answers, in order


_MISSING = object()
REQUESTS: dict[str, type[Request]] = {}  # what the runner serves, by name: every request declared below but Go


def _declare(name: str, *replies: type[Reply], served: bool = True):
    """A message class: a frozen dataclass named `name` on the wire. A request's replies, in order; a served one
    joins REQUESTS."""
    def declare(cls: type[M]) -> type[M]:
        cls = dataclasses.dataclass(frozen=True, slots=True)(cls)
        hints = typing.get_type_hints(cls)
        cls.NAME = name
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass from the line above; type[M] can't say so
        cls.FIELDS = tuple((f.name, _runtime_types(hints[f.name])) for f in fields)
        if issubclass(cls, Request):
            cls.REPLIES = replies
            if served:
                REQUESTS[name] = cls
        return cls
    return declare


def _runtime_types(hint: object) -> tuple[type, ...]:
    """The types a field's JSON value may have: `int | None` -> (int, NoneType); `dict[str, float]` -> (dict,)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return tuple(t for arg in typing.get_args(hint) for t in _runtime_types(arg))
    if hint is None:
        return (type(None),)
    kind = typing.get_origin(hint) or hint
    if not isinstance(kind, type):
        raise TypeError(f"a message field typed {hint!r}, which JSON has no type for")
    return (kind,)


# ---- replies (the runner's: read, then checked) ----

@_declare("pong")
class Pong(Reply):
    pass


@_declare("ready")
class Ready(Reply):
    started: dict  # how the runner's own start went (runner.warm_up), before any code of the candidate's


@_declare("constructed")
class Constructed(Reply):
    parameters: list  # a training problem's: ModelNew's [name, shape] pairs, which the judge holds to Model's


@_declare("workload")
class WorkloadMade(Reply):
    pass


@_declare("called")
class Called(Reply):
    OUTPUT = True


@_declare("settled")
class Settledness(Reply):
    changed: bool


@_declare("profiled")
class Profiled(Reply):
    coverage: dict  # a Coverage (harness.types), as JSON


@_declare("armed")
class Armed(Reply):
    pass


@_declare("timed")
class Timed(Reply):
    event_ms: float
    wall_ms: float
    forward_ms: float | None = None  # a training call's forward half (timing.Sample)


@_declare("output")
class Handed(Reply):
    OUTPUT = True


@_declare("jit")
class JitSeconds(Reply):
    seconds: dict  # Triton's compile and autotune seconds so far


@_declare("ticks")
class OwnTicks(Reply):
    ticks: int


@_declare("end")
class Ended(Reply):
    memory_mib: int  # the most GPU memory the runner's allocator held (-1: not a GPU); the candidate may change it


@_declare("failure")
class Failure(Reply):
    """The runner's last message, in place of any reply: what failed, and whose failure it claims it is."""
    status: str
    message: str


# ---- requests (the judge's) ----

@_declare("ping", Pong)
class Ping(Request):
    """An empty round trip, before setup: the judge's measure of what a reply costs."""


@_declare("setup", Ready, Constructed)
class Setup(Request):
    """Import the problem and the built candidate, construct ModelNew (the judge's init seed); ready comes before
    the candidate's code runs."""
    problem_path: str
    problem_source: str  # the text the parent indexed (protocol.WorkerSpec)
    build_dir: str
    target: str
    dtype: str
    init_seed: int
    scratch: str
    training: bool  # a call is a forward and a backward (training.py)
    device_outbox: int | None  # the GPU whose outputs cross device to device (channel.py), or None


@_declare("workload", WorkloadMade)
class Workload(Request):
    """Make inputs from the problem with these constants from here on (a ModelNew of its own where they change the
    init inputs; the same one where they do not)."""
    values: dict
    distribution: list  # [mean, std] of the inputs' values
    what: str


@_declare("call", Called)
class Call(Request):
    """One checked forward on the inputs of a seed the judge gives: the output goes back, bytes and all."""
    seed: int
    poison: bool
    what: str


@_declare("settled", Settledness)
class Settled(Request):
    """Whether that output changed since it was returned (work still running in the background)."""


@_declare("profile", Profiled)
class Profile(Request):
    """Profiled forwards: the candidate's coverage (coverage.py)."""
    seed: int
    upstream: list  # a training problem's: the [shape, dtype] of each upstream gradient, drawn before profiling


@_declare("time", Armed)
class Time(Request):
    """One timed forward (timing.py's timer), its inputs made first, timed at the judge's Go: the times go back,
    the output is kept."""
    seed: int
    upstream: list  # a training problem's: the [shape, dtype] of each upstream gradient, drawn before the clock runs


@_declare("go", Timed, served=False)
class Go(Request):
    """The second half of Time, never served alone: the judge's clock runs from here to the reply."""


@_declare("output", Handed)
class Output(Request):
    """That kept output, for the judge to check."""
    what: str


@_declare("jit", JitSeconds)
class Jit(Request):
    """Triton's compile and autotune seconds so far (build time, not the stage's)."""


@_declare("ticks", OwnTicks)
class Ticks(Request):
    """The runner's CPU ticks (the judge's load watch tells them from other processes')."""


@_declare("end", Ended)
class End(Request):
    """The Guard's last look."""


def read_request(message: dict) -> Request:
    """The request a message is, or MalformedMessage: an unknown name, a missing or mistyped field."""
    kind = REQUESTS.get(message.get(OP))  # type: ignore[arg-type]
    if kind is None:
        raise MalformedMessage(f"unknown request {message.get(OP)!r}")
    return kind.read(message)
