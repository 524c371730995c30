"""The GPU's lock (harness/device_lock.py) between real processes: a holder alone excludes sharers and other
holders, sharers share, and one waiting to be alone goes before sharers that come after it."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from harness import device_lock, sandbox
from harness.config import load_settings
from harness.device_lock import DeviceLock
from harness.eval import confine
from harness.eval.device_slots import DeviceSlots, planned_bytes
from harness.process import child_env

HOLDER = textwrap.dedent("""
    import sys, time
    from harness.device_lock import DeviceLock
    mode, hold_s, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    lock = DeviceLock.from_env()
    with (lock.alone() if mode == "alone" else lock.shared()):
        with open(log, "a") as f:
            f.write(f"{mode} in {time.monotonic()}\\n")
        time.sleep(hold_s)
        with open(log, "a") as f:
            f.write(f"{mode} out {time.monotonic()}\\n")
""")


@pytest.fixture
def gpu(tmp_path, monkeypatch):
    (tmp_path / "locks").mkdir()
    monkeypatch.setattr(device_lock, "lock_dir", lambda: tmp_path / "locks")
    return 7  # a GPU index no other test uses


def holder(gpu: int, name: str, hold_s: float, log) -> subprocess.Popen:
    """A process holding GPU `gpu`'s lock, alone if `name` is "alone", else shared, through descriptions of its
    own, passed as a judge's are."""
    fds = device_lock.open_fds(gpu)
    try:
        env = {**os.environ, device_lock.ENV: ",".join(map(str, fds))}
        return subprocess.Popen([sys.executable, "-c", HOLDER, name, str(hold_s), str(log)], env=env, pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)


def spans(log) -> dict[str, tuple[float, float]]:
    """Each holder's (in, out)."""
    events: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        name, _, at = line.split()
        events.setdefault(name, []).append(float(at))
    return {name: (times[0], times[1]) for name, times in events.items()}


def until_logged(log, lines: int) -> None:
    deadline = time.monotonic() + 60
    while not (log.exists() and len(log.read_text().splitlines()) >= lines):
        assert time.monotonic() < deadline, "a holder never got in"
        time.sleep(0.02)


def test_sharers_share_and_one_alone_waits_for_them_and_goes_before_later_sharers(gpu, tmp_path):
    log = tmp_path / "log"
    first = [holder(gpu, f"shared{n}", 1.5, log) for n in range(2)]
    until_logged(log, 2)  # both sharers inside at once
    alone = holder(gpu, "alone", 0.5, log)
    time.sleep(0.5)  # it waits at the gate, holding it
    late = holder(gpu, "late", 0.1, log)
    for proc in (*first, alone, late):
        assert proc.wait(timeout=60) == 0
    found = spans(log)
    (a_in, a_out), (l_in, _) = found["alone"], found["late"]
    shared = [found["shared0"], found["shared1"]]
    assert max(s[0] for s in shared) < min(s[1] for s in shared)  # the two sharers overlapped
    assert a_in >= max(s[1] for s in shared)  # alone: only once every sharer was out
    assert l_in >= a_out  # a sharer that came after it waited for it


def test_the_lock_goes_with_a_holder_that_dies(gpu, tmp_path):
    log = tmp_path / "log"
    killed = holder(gpu, "alone", 600, log)
    until_logged(log, 1)
    killed.kill()
    killed.wait()
    lock = DeviceLock.for_device(gpu)
    try:
        with lock.shared():
            pass
    finally:
        lock.close()


def test_slots_admit_side_by_side_only_what_is_known_to_fit():
    budget: list[int | None] = [None]
    slots = DeviceSlots(lambda: budget[0], slots=2)
    gb = 1 << 30
    assert slots.admits(None)  # alone: always
    slots.enter(planned_bytes(4 * gb))  # 13 GB planned
    assert not slots.admits(planned_bytes(1 * gb))  # the contention check cannot tell ours apart yet: one at a time
    budget[0] = 64 * gb
    assert slots.admits(planned_bytes(1 * gb)) and not slots.admits(None)  # an unknown peak waits to be alone
    assert not slots.admits(planned_bytes(20 * gb))  # 13 + 61 GB: over the budget
    slots.enter(planned_bytes(1 * gb))
    assert not slots.admits(planned_bytes(1 * gb))  # two slots full
    slots.leave(planned_bytes(4 * gb))
    slots.leave(planned_bytes(1 * gb))
    assert slots.admits(None)


def test_a_judge_whose_descriptions_did_not_arrive_says_so_and_goes_on(monkeypatch, capsys):
    monkeypatch.setenv(device_lock.ENV, "990,991")  # not open here
    assert DeviceLock.from_env() is None
    assert "the GPU's lock was not passed" in capsys.readouterr().err


TAKE = textwrap.dedent("""
    import fcntl, os, sys
    try:
        fd = os.open(sys.argv[1], os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("taken")
    except OSError as exc:
        print(type(exc).__name__)
""")


def test_a_sandboxed_candidate_cannot_take_a_gpus_lock(tmp_path):
    """The lock files are readable by the user, and flock needs no more: the sandbox hides their directory."""
    gate = device_lock.lock_dir() / "gpu0.gate"
    os.close(device_lock.open_fds(0)[0])  # the files exist, as they do once a judge was started
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    policy = confine.confinement(load_settings(results_dir=tmp_path / "r")).policy(scratch, gpu=False)
    done = subprocess.run(sandbox.command(policy, [sys.executable, "-c", TAKE, str(gate)]), capture_output=True,
                          text=True, timeout=60, cwd=scratch, env=child_env())
    assert done.stdout.strip() in ("PermissionError", "FileNotFoundError", "NotADirectoryError"), done
    plain = subprocess.run([sys.executable, "-c", TAKE, str(gate)], capture_output=True, text=True, timeout=60)
    assert plain.stdout.strip() == "taken"  # outside the sandbox the same code takes it: the test can fail
