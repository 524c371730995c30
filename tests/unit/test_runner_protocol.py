"""The judge-runner protocol (harness/child/runner_protocol.py) is declared once and both ends follow it: the runner
serves every declared request and nothing else, the judge's Remote asks each one and reads the declared replies, and
what the runner sends back is believed only once it reads as declared."""

import json
import socket
import threading
import typing

import pytest
import torch

from harness.child import runner_protocol as messages
from harness.child.channel import Channel, ChannelError
from harness.child.common import EvalFailure, describe
from harness.child.remote import KEPT, Remote
from harness.child.runner import Runner, _report
from harness.evidence import Coverage
from harness.types import HARNESS_ERROR

COVERAGE = Coverage(share=0.5, candidate_ms=1.0, pytorch_ms=1.0, calls=1)
SAMPLES: dict[type[messages.Reply], messages.Reply] = {
    messages.Pong: messages.Pong(), messages.Ready: messages.Ready(started={"ready_s": 1.5, "bogus": 2.0}),
    messages.Constructed: messages.Constructed(parameters=[]), messages.WorkloadMade: messages.WorkloadMade(),
    messages.Called: messages.Called(), messages.Settledness: messages.Settledness(changed=False),
    messages.Profiled: messages.Profiled(coverage=COVERAGE.model_dump(mode="json")), messages.Armed: messages.Armed(),
    messages.Timed: messages.Timed(event_ms=1.25, wall_ms=1.25), messages.Handed: messages.Handed(),
    messages.JitSeconds: messages.JitSeconds(seconds={"compile": 0.5, "elsewhere": 9.0}),
    messages.OwnTicks: messages.OwnTicks(ticks=7), messages.Ended: messages.Ended(memory_mib=512),
}
OUTPUT = torch.arange(6.0)
DECLARED = {**messages.REQUESTS, messages.Go.NAME: messages.Go}
SPEC = dict(problem_path="/p/relu.py", problem_source="", build_dir="/b", target="cpu", dtype="float32", init_seed=3,
            scratch="/s", training=False)


class FakeRunner(threading.Thread):
    """Answers each request with the replies its declaration names (SAMPLES'), or with `answers[op]` where given,
    and records what it was asked."""

    def __init__(self, channel: Channel, answers: dict[str, list[dict]] | None = None):
        super().__init__(daemon=True)
        self.channel, self.answers, self.asked = channel, answers or {}, []

    def run(self) -> None:
        while True:
            try:
                message, _ = self.channel.receive()
            except ChannelError:  # the test is over
                return
            request = DECLARED[message["op"]].read(message)
            self.asked.append(request)
            if message["op"] in self.answers:
                for reply in self.answers[message["op"]]:
                    self.channel.send(reply)
            else:
                for kind in type(request).REPLIES:
                    self.channel.send(SAMPLES[kind].wire(), value=OUTPUT if kind.OUTPUT else None)
            if type(request) is messages.End:
                return


@pytest.fixture()
def pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    remote, runner = Remote(a.detach(), torch.device("cpu")), Channel(b.detach())
    yield remote, runner
    remote.channel.sock.close()
    runner.sock.close()


def every_request(remote: Remote) -> None:
    """The judge's whole API, in the order an evaluation uses it."""
    assert len(remote.round_trips(2)) == 2
    remote.setup(SPEC)
    remote.constructed()
    remote.workload({"N": 4}, (0.0, 1.0), "a workload")
    assert torch.equal(remote.call(5, True, "the first call", OUTPUT), OUTPUT)
    assert remote.settled("the first call") is True
    assert remote.profile(6, []) == COVERAGE
    sample = remote.timer(None, [7, []])
    assert (sample.event_ms, sample.wall_ms, sample.output) == (1.25, 1.25, KEPT)
    found, handover_ms = remote.output("a timed call", OUTPUT)
    assert torch.equal(found, OUTPUT) and handover_ms >= 0
    assert remote.ticks() == 7
    remote.end()


def test_every_declared_request_is_asked_by_the_judge_and_its_declared_replies_read(pair):
    remote, channel = pair
    runner = FakeRunner(channel)
    runner.start()
    every_request(remote)
    runner.join(5)
    assert {type(r) for r in runner.asked} == set(DECLARED.values())
    assert remote.runner_start == {"ready_s": 1.5} and remote.jit_seconds == {"compile": 0.5}  # checked, not believed
    setup = next(r for r in runner.asked if type(r) is messages.Setup)
    assert setup == messages.Setup(**SPEC, device_outbox=None)


def test_every_declared_request_is_served_by_the_runner_and_nothing_else():
    assert set(Runner.SERVES) == set(messages.REQUESTS.values())
    assert messages.Go not in Runner.SERVES  # only Time awaits it
    for kind, handler in Runner.SERVES.items():  # each handler takes the request it serves
        hints = typing.get_type_hints(handler)
        assert next(iter(hints.values())) is kind, handler.__name__


def test_every_message_the_module_declares_is_in_its_tables():
    bases = {messages.Message, messages.Request, messages.Reply}
    declared = {v for v in vars(messages).values() if isinstance(v, type) and issubclass(v, messages.Message)} - bases
    requests = {k for k in declared if issubclass(k, messages.Request)}
    assert requests == set(messages.REQUESTS.values()) | {messages.Go}
    assert declared - requests == {r for k in requests for r in k.REPLIES} | {messages.Failure}
    for kinds in (requests, declared - requests):
        assert len({k.NAME for k in kinds}) == len(kinds)


def test_every_message_survives_json_and_a_malformed_one_is_refused():
    for message in [*SAMPLES.values(), messages.Setup(**SPEC, device_outbox=0), messages.Go(),
                    messages.Workload(values={"N": 4}, distribution=[0.0, 1.0], what="w"),
                    messages.Call(seed=1, poison=False, what="c"), messages.Failure(status="incorrect", message="m")]:
        assert type(message).read(json.loads(json.dumps(message.wire()))) == message
    call = messages.Call(seed=1, poison=False, what="c").wire()
    assert messages.read_request(call) == messages.Call(seed=1, poison=False, what="c")
    for bad in ({**call, "seed": True}, {**call, "seed": 1.0}, {k: v for k, v in call.items() if k != "what"},
                {**call, "op": "nope"}, {"event": "call"}):
        with pytest.raises(messages.MalformedMessage):
            messages.read_request(bad)
    with pytest.raises(messages.MalformedMessage):  # a reply is never read as another
        messages.Timed.read(messages.Armed().wire())


def test_an_unknown_or_malformed_request_ends_the_runner_as_the_harness_s_error(pair):
    remote, channel = pair

    def serve():  # as runner.main does
        try:
            Runner(channel, {}).serve()
        except BaseException as exc:
            _report(channel, HARNESS_ERROR, f"harness error in the candidate's process: {describe(exc)}")

    for request in ({"op": "nope"}, {"op": "call", "seed": 1}):
        runner = threading.Thread(target=serve, daemon=True)
        runner.start()
        with pytest.raises(EvalFailure) as failure:
            remote.exchange(request, "(asked)")
        runner.join(5)
        assert failure.value.status == HARNESS_ERROR and "MalformedMessage" in str(failure.value)
        assert remote.ended


@pytest.mark.parametrize(("op", "answer", "asks", "expected"), [
    # a reply out of turn, malformed times, a malformed coverage or failure: the candidate's runtime_error
    ("workload", [messages.Pong().wire()], lambda r: r.workload({}, (0.0, 1.0), "w"), "answered out of turn"),
    ("profile", [{"event": "profiled", "coverage": "all of it"}], lambda r: r.profile(1, []), "malformed coverage"),
    ("go", [{"event": "timed", "event_ms": 1, "wall_ms": 1.0}], lambda r: r.timer(None, [1, []]), "malformed times"),
    ("go", [{"event": "timed", "event_ms": -1.0, "wall_ms": -1.0}], lambda r: r.timer(None, [1, []]),
     "malformed times"),
    ("end", [{"event": "failure", "status": 1, "message": "m"}], lambda r: r.end(), "malformed failure"),
    ("call", [messages.Called().wire()], lambda r: r.call(1, False, "c", OUTPUT), "sent no output"),
    # figures that say nothing believable are none
    ("settled", [{"event": "settled", "changed": 0}], lambda r: r.settled("c"), False),
    ("ticks", [{"event": "ticks", "ticks": -3}], lambda r: r.ticks(), 0),
    ("jit", [{"event": "jit", "seconds": [1.0]}], lambda r: r.jit(), {}),
])
def test_what_the_runner_sends_is_believed_only_as_declared(pair, op, answer, asks, expected):
    remote, channel = pair
    remote.started = True  # the candidate's code has run: its failures are its own
    runner = FakeRunner(channel, {op: answer})
    runner.start()
    if isinstance(expected, str):
        with pytest.raises(EvalFailure, match=expected) as failure:
            asks(remote)
        assert failure.value.status == "runtime_error"
    else:
        assert asks(remote) == expected
