"""Outputs crossing device to device (harness/child/channel.py with device_share.py), between two real processes:
the runner's side in a sandboxed child, the judge's here."""
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from harness import sandbox
from harness.device import visible_gpus

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

RUNNER = textwrap.dedent("""
    import sys, torch
    from harness.child.channel import Channel
    channel = Channel(int(sys.argv[1]))
    channel.use_device = 0
    torch.cuda.set_device(0)
    for n in (1000, 3000, 1 << 26):
        g = torch.Generator(device="cuda").manual_seed(n)
        out = (torch.randn(n, device="cuda", generator=g), [torch.arange(7, device="cuda"), 2.5])
        channel.send({"event": "called"}, value=out)
        channel.receive()  # as in the real protocol: the next output only once the judge asked for it
    channel.send({"event": "called"}, value=torch.ones(5))  # a CPU tensor: through the file
    channel.receive()
""")


@pytest.fixture()
def runner(tmp_path):
    judge_end, runner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    argv = sandbox.command(sandbox.Policy(scratch=tmp_path, gpu=True),
                           [sys.executable, "-c", RUNNER, str(runner_end.fileno())])
    proc = subprocess.Popen(argv, pass_fds=(runner_end.fileno(),), cwd=os.getcwd(),
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    runner_end.close()
    yield judge_end
    proc.kill()
    proc.wait()


def test_outputs_cross_device_to_device_from_a_sandboxed_runner(runner):
    import torch

    from harness.child.channel import Channel

    judge = Channel(runner.detach())
    device = torch.device("cuda", 0)
    # The outbox's descriptor comes with the first output and with the one that outgrows it (256 MB); the judge keeps
    # its mapping for the output between them.
    for n, new_outbox in ((1000, True), (3000, False), (1 << 26, True)):
        g = torch.Generator(device="cuda").manual_seed(n)
        expected = (torch.randn(n, device="cuda", generator=g), [torch.arange(7, device="cuda"), 2.5])
        message, fd = judge.receive()
        assert message["box"][0] == "device" and (fd is not None) == new_outbox
        got = judge.decode(message["value"], fd, expected, device, message.get("box"))
        assert judge.last_box == "device"
        assert got[0].device == device and torch.equal(got[0], expected[0]) and torch.equal(got[1][0], expected[1][0])
        assert got[1][1] == 2.5
        judge.send({"op": "next"})
    message, fd = judge.receive()
    assert "box" not in message
    got = judge.decode(message["value"], fd, torch.ones(5), device)
    assert judge.last_box == "host" and got.device.type == "cpu" and torch.equal(got, torch.ones(5))
    judge.send({"op": "end"})


def test_a_descriptor_the_driver_did_not_export_is_refused_and_the_judge_goes_on():
    import torch

    from harness.child.channel import Channel, ChannelError

    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    judge = Channel(a.detach())
    device = torch.device("cuda", 0)
    tree = {"t": ["float32", [4], "cuda", 0, 16]}
    r, w = os.pipe()
    with pytest.raises(ChannelError, match="cannot be mapped"):
        judge.decode(tree, r, torch.zeros(4, device=device), device, ["device", 2 << 20])
    memfd = os.memfd_create("not-the-driver")
    os.ftruncate(memfd, 2 << 20)
    with pytest.raises(ChannelError, match="cannot be mapped"):
        judge.decode(tree, memfd, torch.zeros(4, device=device), device, ["device", 2 << 20])
    with pytest.raises(ChannelError, match="malformed outbox"):
        judge.decode(tree, os.dup(w), torch.zeros(4, device=device), device, ["device", "big"])
    os.close(w)
    assert float((torch.ones(8, device=device) * 2).sum()) == 16.0  # no sticky error left behind
    b.close()


def test_a_mapping_larger_than_the_allocation_is_refused():
    import torch

    from harness.child import device_share
    from harness.child.channel import Channel, ChannelError

    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    judge, runner = Channel(a.detach()), Channel(b.detach())
    runner.use_device = 0
    device = torch.device("cuda", 0)
    runner.send({"event": "called"}, value=torch.ones(4, device=device))
    message, fd = judge.receive()
    size = message["box"][1]
    with pytest.raises(ChannelError, match="cannot be mapped"):
        judge.decode(message["value"], fd, torch.ones(4, device=device), device, ["device", size * 4])
    assert float((torch.ones(8, device=device) * 2).sum()) == 16.0
    assert device_share.supported(0)


def test_an_outbox_the_judge_was_not_given_is_refused():
    import torch

    from harness.child.channel import Channel, ChannelError

    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    judge, runner = Channel(a.detach()), Channel(b.detach())
    runner.use_device = 0
    device = torch.device("cuda", 0)
    tree = {"t": ["float32", [4], "cuda", 0, 16]}
    with pytest.raises(ChannelError, match="not given"):  # no descriptor yet
        judge.decode(tree, None, torch.ones(4, device=device), device, ["device", 64 << 20])
    runner.send({"event": "called"}, value=torch.ones(4, device=device))
    message, fd = judge.receive()
    assert torch.equal(judge.decode(message["value"], fd, torch.ones(4, device=device), device, message["box"]),
                       torch.ones(4, device=device))
    with pytest.raises(ChannelError, match="not given"):  # a size other than the mapping's
        judge.decode(tree, None, torch.ones(4, device=device), device, ["device", message["box"][1] * 2])
    runner.send({"event": "called"}, value=torch.full((4,), 3.0, device=device))
    message, fd = judge.receive()
    assert fd is None
    assert torch.equal(judge.decode(message["value"], fd, torch.ones(4, device=device), device, message["box"]),
                       torch.full((4,), 3.0, device=device))
