"""The GPU's lock (harness/device_lock.py) between real processes: a holder alone excludes sharers and other
holders, sharers share, one waiting to be alone goes before sharers that come after it, and sharers that each want
the device alone for a while (the poisoned calls) take turns. And how evaluations are let in beside each other
(harness/eval/device_slots.py)."""
import os
import subprocess
import sys
import textwrap
import threading
import time
from types import SimpleNamespace

import pytest

from harness import device_lock, sandbox
from harness.config import load_settings
from harness.device_lock import DeviceLock
from harness.eval import confine, scheduler
from harness.eval.device_slots import CONTEXTS_BYTES, MARGIN, DeviceSlots, MemoryPlan, needs_alone
from harness.figures import Figures, ProcessFigures
from harness.process import child_env
from harness.types import CheckResult, EvalResult

HOLDER = textwrap.dedent("""
    import contextlib, sys, time
    from harness.device_lock import DeviceLock
    mode, hold_s, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    lock = DeviceLock.from_env()
    with (lock.alone() if mode == "alone" else lock.shared()):
        with (lock.alone_awhile() if mode.startswith("awhile") else contextlib.nullcontext()):
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


def test_sharers_wanting_the_device_alone_awhile_take_turns_after_the_other_sharers(gpu, tmp_path):
    log = tmp_path / "log"
    first = holder(gpu, "shared", 1.0, log)
    until_logged(log, 1)
    both = [holder(gpu, f"awhile{n}", 0.3, log) for n in range(2)]  # each shared, then alone for its block
    for proc in (first, *both):
        assert proc.wait(timeout=60) == 0  # neither waits for the other's shared hold for good
    found = spans(log)
    (a_in, a_out), (b_in, b_out) = found["awhile0"], found["awhile1"]
    assert min(a_in, b_in) >= found["shared"][1]  # alone: once the plain sharer was out
    assert a_out <= b_in or b_out <= a_in  # and never together


GB = 1 << 30


def evaluated(judge_mib: int | None = None, runner_mib: int | None = None, error: str | None = None,
              truth: str | None = "float64") -> EvalResult:
    status = "runtime_error" if error else "correct"
    check = CheckResult(status=status, trials=5, atol=1e-4, rtol=1e-4, truth=truth) if not error else None
    figures = Figures(process=ProcessFigures(judge_memory_mib=judge_mib, runner_memory_mib=runner_mib))
    return EvalResult(problem_id="p", problem_sha256="0" * 64, candidate_path=None, candidate_sha256="1" * 64,
                      target="cuda", device_name="gpu", torch_version="2", status=status, error=error, check=check,
                      figures=figures)


def test_slots_admit_side_by_side_only_what_is_known_to_fit():
    budget: list[int | None] = [None]
    slots = DeviceSlots(lambda: budget[0], slots=2)
    assert slots.admits(None)  # alone: always
    first = slots.enter(13 * GB)
    assert not slots.admits(GB)  # the contention check cannot tell ours apart yet: one at a time
    budget[0] = 64 * GB
    assert slots.admits(GB) and not slots.admits(None)  # an unknown need waits to be alone
    assert not slots.admits(52 * GB)  # 13 + 52 GB: over the budget
    second = slots.enter(GB)
    assert first.shared and second.shared
    assert not slots.admits(GB)  # two slots full
    slots.leave(first)
    slots.leave(second)
    assert slots.admits(None) and not slots.enter(None).shared


def test_an_evaluation_plans_by_what_its_problem_took_before():
    plan = MemoryPlan()
    assert plan.need("p") is None  # never measured: alone
    plan.learn("p", evaluated())  # stopped before timing, or not a GPU: nothing learned
    assert plan.need("p") is None
    plan.learn("p", evaluated(judge_mib=8 * 1024, runner_mib=4 * 1024))
    plan.learn("p", evaluated(judge_mib=2 * 1024, runner_mib=1024))  # the most it took stands
    assert plan.need("p") == int(MARGIN * 12 * GB) + CONTEXTS_BYTES
    assert plan.need("other") is None


def test_an_evaluation_beside_others_that_ran_out_of_memory_or_lost_its_truth_is_made_again_alone():
    slots = DeviceSlots(lambda: 64 * GB, slots=2)
    alone = slots.enter(GB)
    oom = evaluated(error="CUDA error: out of memory (while the candidate was called)")
    assert not needs_alone(alone, oom)  # alone: the candidate's own
    beside = slots.enter(GB)
    assert needs_alone(beside, oom) and needs_alone(alone, oom)
    assert needs_alone(beside, evaluated(truth="reference"))  # its float64 truth did not fit beside the other
    assert not needs_alone(beside, evaluated())
    assert not needs_alone(beside, evaluated(error="an illegal memory access was encountered"))


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


def test_the_scheduler_evaluates_again_alone_what_a_neighbour_may_have_decided(monkeypatch):
    slots = DeviceSlots(lambda: 64 * GB, slots=2)
    beside: list[int] = []  # how many were let in when each evaluation ran

    def evaluate_built(job_context, child):
        beside.append(len(slots.inside))
        return evaluated(error="CUDA out of memory. Tried to allocate 3.00 GiB") if len(beside) == 1 else evaluated()

    monkeypatch.setattr(scheduler, "evaluate_built", evaluate_built)
    run = object.__new__(scheduler.LocalRun)  # its evaluation path alone: no builds, no children
    run.batch = SimpleNamespace(builds={"c": None})
    run.context = SimpleNamespace(on=lambda device: SimpleNamespace(job=lambda job, build: job))
    neighbour = slots.enter(GB)
    threading.Timer(0.5, slots.leave, [neighbour]).start()  # the retry, alone, waits for it to end
    result, _, _ = run.seated(SimpleNamespace(candidate=SimpleNamespace(sha256="c")), None, None, slots, GB)
    assert beside == [2, 1] and result.status == "correct"
