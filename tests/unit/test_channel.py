"""The judge's channel to its runner (harness/child/channel.py): what crosses, and what the judge refuses."""
import os
import socket

import pytest
import torch

from harness.child.channel import Channel, ChannelClosed, ChannelError, decode
from harness.eval.plausibility import timing_disputed
from harness.protocol import WorkerReport
from harness.types import Timing


@pytest.fixture()
def pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    judge, runner = Channel(a.detach()), Channel(b.detach())
    yield judge, runner
    judge.sock.close()
    runner.sock.close()


def received(judge: Channel, expected):
    message, fd = judge.receive()
    try:
        return decode(message["value"], fd, expected, torch.device("cpu"))
    finally:
        if fd is not None:
            os.close(fd)


def test_an_output_crosses_bytes_and_all(pair):
    judge, runner = pair
    out = (torch.randn(3, 5), [torch.arange(4), 2.5, None], torch.tensor(True))
    runner.send({"event": "called"}, value=out)
    got = received(judge, out)
    assert type(got) is tuple and torch.equal(got[0], out[0]) and torch.equal(got[1][0], out[1][0])
    assert got[1][1:] == [2.5, None] and bool(got[2]) is True


def test_a_tensor_unlike_the_expected_one_is_never_read(pair):
    judge, runner = pair
    runner.send({"event": "called"}, value=torch.zeros(1000, 1000))
    got = received(judge, torch.zeros(10))
    assert got.device.type == "meta" and got.shape == (1000, 1000)  # its claimed shape, to be reported, no memory


def test_a_non_tensor_output_is_named_not_trusted(pair):
    judge, runner = pair
    runner.send({"event": "called"}, value={"not": "a tensor"})
    assert repr(received(judge, torch.zeros(1))) == "<builtins.dict>"


def test_malformed_messages_are_refused(pair):
    judge, runner = pair
    runner.sock.send(b"not json")
    with pytest.raises(ChannelError, match="not JSON"):
        judge.receive()
    runner.sock.send(b"x" * 70000)
    with pytest.raises(ChannelError, match="size limit"):
        judge.receive()


def test_bytes_the_file_does_not_hold_are_refused(pair):
    judge, runner = pair
    fd = os.memfd_create("short")
    os.ftruncate(fd, 8)
    tree = {"t": ["float32", [4], "cpu", 0, 16]}
    with pytest.raises(ChannelError, match="not in the outputs' file"):
        decode(tree, fd, torch.zeros(4), torch.device("cpu"))
    r, w = os.pipe()
    with pytest.raises(ChannelError, match="not a file"):
        decode(tree, r, torch.zeros(4), torch.device("cpu"))
    for f in (fd, r, w):
        os.close(f)


def test_a_runner_that_went_away_is_told_apart(pair):
    judge, runner = pair
    runner.sock.close()
    with pytest.raises(ChannelClosed):
        judge.receive()


def report(unreported_ms, wall_ms):
    timing = Timing(median_ms=wall_ms, mean_ms=wall_ms, std_ms=0.0, min_ms=wall_ms, n=10, rse=0.0,
                    wall_median_ms=wall_ms)
    return WorkerReport(status="correct", runtime=timing, ref_runtime=timing, device_name="x", torch_version="x",
                        unreported_ms=unreported_ms)


def test_timing_is_disputed_beyond_the_judge_s_margin():
    assert timing_disputed(report(0.2, 1.0), "cpu") == []
    assert timing_disputed(report(0.6, 1.0), "cpu") == ["timing_disputed"]
    assert timing_disputed(report(0.6, 10.0), "cpu") == []  # under 15 % of its time
    assert timing_disputed(report(0.2, 0.5), "cuda") == ["timing_disputed"]
    assert timing_disputed(report(None, 1.0), "cuda") == []
