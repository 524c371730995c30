"""The judge's channel to its runner (harness/child/channel.py): what crosses, and what the judge refuses."""
import os
import socket

import pytest
import torch

from harness.child.channel import Channel, ChannelClosed, ChannelError
from harness.eval.plausibility import deferred_work, measurement_flags, timing_disputed
from harness.figures import Contention, Figures, FlagEvidence
from harness.protocol import WorkerReport
from harness.types import DeviceInfo, Timing


@pytest.fixture()
def pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    judge, runner = Channel(a.detach()), Channel(b.detach())
    yield judge, runner
    judge.sock.close()
    runner.sock.close()


def received(judge: Channel, expected):
    message, fd = judge.receive()
    return judge.decode(message["value"], fd, expected, torch.device("cpu"))


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


def test_the_file_is_reused_and_must_be_a_sealed_memfd(pair):
    judge, runner = pair
    for n in (4, 8):
        runner.send({"event": "called"}, value=torch.full((n,), float(n)))
        assert torch.equal(received(judge, torch.zeros(n)), torch.full((n,), float(n)))
    assert judge.inbox is not None and judge.inbox.key == runner.outbox.key  # one file, mapped once
    tree = {"t": ["float32", [4], "cpu", 0, 16]}
    unsealed = os.memfd_create("unsealed")
    os.ftruncate(unsealed, 64)
    with pytest.raises(ChannelError, match="not a sealed memfd"):
        judge.decode(tree, unsealed, torch.zeros(4), torch.device("cpu"))
    r, w = os.pipe()
    with pytest.raises(ChannelError, match="not a sealed memfd"):
        judge.decode(tree, r, torch.zeros(4), torch.device("cpu"))
    os.close(w)
    runner.send({"event": "called"}, value=torch.zeros(4))
    message, fd = judge.receive()
    message["value"]["t"][3] = runner.outbox.size  # bytes past the file's end
    with pytest.raises(ChannelError, match="not in the outputs' file"):
        judge.decode(message["value"], fd, torch.zeros(4), torch.device("cpu"))


def test_a_runner_that_went_away_is_told_apart(pair):
    judge, runner = pair
    runner.sock.close()
    with pytest.raises(ChannelClosed):
        judge.receive()


def report(unreported_ms, wall_ms, deferred_ms=None, copy_ms=None):
    timing = Timing(median_ms=wall_ms, mean_ms=wall_ms, std_ms=0.0, min_ms=wall_ms, n=10, rse=0.0,
                    wall_median_ms=wall_ms)
    evidence = FlagEvidence(unreported_ms=unreported_ms, deferred_ms=deferred_ms, copy_ms=copy_ms)
    return WorkerReport(status="correct", runtime=timing, ref_runtime=timing, device_name="x", torch_version="x",
                        figures=Figures(evidence=evidence))


def test_timing_is_disputed_beyond_the_judge_s_margin():
    assert timing_disputed(report(0.2, 1.0), "cpu") == []
    assert timing_disputed(report(0.6, 1.0), "cpu") == ["timing_disputed"]
    assert timing_disputed(report(0.6, 10.0), "cpu") == []  # under 15 % of its time
    assert timing_disputed(report(0.25, 0.5), "cuda") == ["timing_disputed"]
    assert timing_disputed(report(0.15, 0.5), "cuda") == ["timing_disputed"]  # a third of a 0.4 ms relu's time
    assert timing_disputed(report(0.08, 0.5), "cuda") == []
    assert timing_disputed(report(0.23, 3.5), "cuda") == []  # the most an honest result showed: at 3.5 ms
    assert timing_disputed(report(None, 1.0), "cuda") == []


def test_an_output_still_being_made_when_it_is_read_is_hidden_work():
    assert deferred_work(report(None, 2.0, deferred_ms=-3.0), "cpu") == []   # the judge's copy was the slower
    assert deferred_work(report(None, 2.0, deferred_ms=3.0), "cpu") == []    # under the round trip's margin
    assert deferred_work(report(None, 2.0, deferred_ms=22.0), "cpu") == ["hidden_work"]
    assert deferred_work(report(None, 40.0, deferred_ms=8.0), "cpu") == []   # under a quarter of its time
    assert deferred_work(report(None, 0.1, deferred_ms=0.7), "cuda") == []  # an honest device hand-over's extra
    assert deferred_work(report(None, 0.1, deferred_ms=1.2), "cuda") == ["hidden_work"]
    assert deferred_work(report(None, 0.1, deferred_ms=None), "cuda") == []  # no timed output was checked
    # gigabytes copied out of the GPU: two processes' copies differ by more than the candidate's time
    assert deferred_work(report(None, 2.0, deferred_ms=40.0, copy_ms=900.0), "cuda") == []
    assert deferred_work(report(None, 2.0, deferred_ms=1200.0, copy_ms=900.0), "cuda") == ["hidden_work"]
    cpu = DeviceInfo(name="x", target="cpu")
    assert measurement_flags(report(None, 2.0, deferred_ms=22.0), cpu) == ["hidden_work"]


def loaded(report: WorkerReport) -> WorkerReport:
    """The report with half the cores' time other processes'."""
    return report.model_copy(update={"figures": report.figures.add(contention=Contention(cpu_foreign_share=0.5))})


def test_a_contended_result_is_not_accused_on_the_judge_s_clocks():
    """Other processes on the cores or the GPU delay a hand-over and a timed call's round trip too; a contended
    result is not counted anyway."""
    cpu = DeviceInfo(name="x", target="cpu")
    busy = loaded(report(None, 2.0, deferred_ms=22.0))
    assert measurement_flags(busy, cpu) == ["contended"]
    disputed = loaded(report(0.9, 2.0))
    assert measurement_flags(disputed, cpu) == ["contended"]
    assert measurement_flags(report(0.9, 2.0), cpu) == ["timing_disputed"]
    assert measurement_flags(report(None, 2.0, deferred_ms=22.0), cpu, gpu_contended=True) == []


def test_cpu_outputs_cross_through_the_file_and_a_device_outbox_is_refused_off_the_gpu(pair):
    judge, runner = pair
    runner.use_device = 0  # outputs not on that GPU still go through the file
    runner.send({"event": "called"}, value=torch.ones(3))
    message, fd = judge.receive()
    assert "box" not in message
    assert torch.equal(judge.decode(message["value"], fd, torch.ones(3), torch.device("cpu")), torch.ones(3))
    assert judge.last_box == "host"
    r, w = os.pipe()
    with pytest.raises(ChannelError, match="malformed outbox"):  # a device box claimed on a cpu evaluation
        judge.decode({"t": ["float32", [3], "cuda", 0, 12]}, r, torch.ones(3), torch.device("cpu"), ["device", 64])
    os.close(w)
