"""The GPU contention check (harness/eval/gpu_load.py): its decisions, with a fake pynvml at the NVML boundary and
a scripted GPU (who holds a context, who computes when), on a fake clock: no GPU, no real waiting."""
import math
import os
import signal
import subprocess
import sys
import time
from collections import deque
from types import SimpleNamespace

import pytest

from harness import process
from harness.config import load_settings
from harness.eval import gpu_load, gpu_sampler
from harness.eval.gpu_load import Check, Owners, Watch
from harness.eval.gpu_sampler import NvidiaSmi, Nvml
from harness.figures import Contention
from harness.flags import CONTENDED
from harness.types import DeviceInfo

OURS = 4_200_001     # PIDs above the kernel's limit (2^22) never exist here: scripted processes only
HOST = 5_000_000     # PIDs as a host would number them, seen from a container
FOREIGN = os.getppid()  # alive and not our descendant: another's process


class World:
    """The GPU NVML describes: processes listed while they hold a context, each computing over intervals."""

    TICK = 1 / 6  # NVML's per-process samples come about every 1/6 s

    def __init__(self):
        self.now = 1.7e9
        self.listed: dict[int, tuple[float, float]] = {}
        self.busy: list[tuple[int, float, float, float]] = []
        self.process_util = True   # False: per-process utilization not supported
        self.hidden = False        # True: per-process utilization shows nothing (a container that hides it)
        self.failing = False
        self.history_s = math.inf  # NVML keeps per-process samples this long

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def process(self, pid: int, start: float, end: float = math.inf, util: float = 0.0) -> None:
        """`pid` holds a context from start to end, computing at `util` % of the SMs throughout."""
        self.listed[pid] = (start, end)
        if util:
            self.busy.append((pid, start, end, util))

    def evaluate(self, check: Check, child: int, seconds: float = 3.0) -> Check:
        """One evaluation: the check before, our child computing for `seconds`, the check after."""
        check.before()
        self.process(child, self.now, self.now + seconds, 100.0)
        self.now += seconds
        check.after()
        return check

    def samples(self, since: float) -> list:
        since = max(since, self.now - self.history_s)
        ticks = range(math.floor(since / self.TICK) + 1, math.floor(self.now / self.TICK) + 1)
        return [SimpleNamespace(pid=pid, timeStamp=int(k * self.TICK * 1e6), smUtil=util, memUtil=0)
                for k in ticks for pid, start, end, util in self.busy if start < k * self.TICK <= end]

    def device_util(self) -> float:
        return max((u for _, start, end, u in self.busy if start < self.now and end > self.now - 1.0), default=0.0)


class FakeNvml:
    """What harness.eval.gpu_load uses of pynvml, answering from a World."""

    NVML_SUCCESS, NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_FOUND = 0, 3, 6

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(f"NVML error {value}")
            self.value = value

    def __init__(self, world: World):
        self.world = world
        self.calls = 0

    def nvmlDeviceGetHandleByIndex(self, index):
        return ("gpu", index)

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        self.calls += 1
        if self.world.failing:
            raise self.NVMLError(999)
        now = self.world.now
        return [SimpleNamespace(pid=pid, usedGpuMemory=1 << 30)
                for pid, (start, end) in self.world.listed.items() if start <= now < end]

    def nvmlDeviceGetProcessUtilization(self, handle, since_us):
        self.calls += 1
        if not self.world.process_util:
            raise self.NVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        samples = [] if self.world.hidden else self.world.samples(since_us / 1e6)
        if not samples:
            raise self.NVMLError(self.NVML_ERROR_NOT_FOUND)
        return samples

    def nvmlDeviceGetUtilizationRates(self, handle):
        self.calls += 1
        return SimpleNamespace(gpu=self.world.device_util(), memory=0)

    def nvmlDeviceGetMinorNumber(self, handle):
        return 0


@pytest.fixture
def world():
    return World()


def watch_of(world: World, owners: Owners | None = None) -> Watch:
    return Watch(Nvml(FakeNvml(world)), 0, owners=owners or Owners(started=lambda: {OURS, OURS + 1, OURS + 2,
                                                                                     OURS + 3, OURS + 4}),
                 clock=world.clock)


def check(watch: Watch, world: World, wait_s: float = 30.0) -> Check:
    return Check(watch, wait_s, sleep=world.sleep, poll_during=False)  # looks during: test_a_long_evaluation...


def test_no_other_process_no_wait_no_flag(world):
    world.process(OURS, world.now - 5)          # an evaluation child started ahead of need: ours, idle
    watch = watch_of(world)
    for child in (OURS + 1, OURS + 2):
        c = world.evaluate(check(watch, world), child)
        assert c.flags == () and c.waited == 0
        assert c.figures.gpu_check_s is not None and c.figures.gpu_wait_s is None
        world.now += 0.05                      # the next evaluation follows at once
    assert watch.matched  # our own spare was listed: NVML numbers processes as we do


def test_work_that_stops_is_waited_for_and_the_result_is_clean(world):
    world.process(FOREIGN, world.now - 10, world.now + 2, util=100)
    c = world.evaluate(check(watch_of(world), world), OURS + 1)
    assert c.flags == ()
    assert 2 <= c.figures.gpu_wait_s <= 2 + gpu_load.IDLE_S + 2 * gpu_load.POLL_S


def test_a_pause_in_bursty_work_is_not_taken_for_the_end(world):
    for burst in range(4):  # busy half a second, idle half a second, for 4 s
        world.busy.append((FOREIGN, world.now - 1 + burst, world.now - 0.5 + burst, 100))
    world.process(FOREIGN, world.now - 1, world.now + 3)
    c = world.evaluate(check(watch_of(world), world), OURS + 1)
    assert c.flags == () and c.figures.gpu_wait_s >= 2.5 + gpu_load.IDLE_S - gpu_load.POLL_S


def test_work_that_stays_is_waited_for_up_to_the_bound_then_flagged_and_not_waited_for_again(world):
    world.process(FOREIGN, world.now - 10, world.now + 100, util=100)
    watch = watch_of(world)
    first = world.evaluate(check(watch, world, wait_s=5), OURS + 1)
    assert first.flags == (CONTENDED,)
    assert 5 <= first.figures.gpu_wait_s <= 5 + gpu_load.POLL_S
    second = world.evaluate(check(watch, world, wait_s=5), OURS + 2)  # still busy: timed at once, flagged
    assert second.flags == (CONTENDED,) and second.waited == 0
    world.now += 100                                                 # the other job has ended
    third = world.evaluate(check(watch, world, wait_s=5), OURS + 3)
    assert third.flags == () and third.waited == 0
    assert not watch.persisting


def test_a_zero_wait_flags_at_once(world):
    world.process(FOREIGN, world.now - 10, util=100)
    c = world.evaluate(check(watch_of(world), world, wait_s=0), OURS + 1)
    assert c.flags == (CONTENDED,) and c.waited == 0


def test_work_during_the_evaluation_is_flagged(world):
    world.process(FOREIGN, world.now + 1, world.now + 2, util=60)  # starts and ends while we time
    c = world.evaluate(check(watch_of(world), world), OURS + 1)
    assert c.flags == (CONTENDED,) and c.waited == 0


def test_a_long_evaluation_is_looked_at_during_it_too(world):
    """NVML keeps a limited history of samples: work early in a long evaluation is seen by looks during it."""
    world.history_s = 10
    watch = watch_of(world)
    world.process(FOREIGN, world.now + 1, world.now + 3, util=100)
    late = check(watch, world)
    world.evaluate(late, OURS + 1, seconds=30)
    assert late.flags == ()  # one look at the end: the samples are gone
    world.process(FOREIGN, world.now + 1, world.now + 3, util=100)
    c = check(watch, world)
    c.before()
    world.process(OURS + 2, world.now, world.now + 30, 100.0)
    for _ in range(6):
        world.now += gpu_load.DURING_POLL_S
        c.look_during()
    c.after()
    assert c.flags == (CONTENDED,)


def test_the_looks_during_an_evaluation_run_on_a_thread_until_after(world, monkeypatch):
    monkeypatch.setattr(gpu_load, "DURING_POLL_S", 0.01)
    c = Check(watch_of(world), 30.0, sleep=world.sleep)
    c.before()
    for _ in range(1000):
        if c.during:
            break
        time.sleep(0.01)
    poller = c._poller
    c.after()
    assert c.during and not poller.is_alive() and c.flags == ()


def test_another_process_holding_an_idle_context_is_no_contention(world):
    world.process(FOREIGN, world.now - 10)
    c = world.evaluate(check(watch_of(world), world), OURS + 1)
    assert c.flags == () and c.waited == 0


def test_our_own_children_and_their_descendants_never_count(world, monkeypatch):
    """Children the harness started (process.started), their descendants found by the /proc ppid chain,
    and a child that has exited since it used the GPU: all computing before and during, none of it another's."""
    monkeypatch.setattr(process, "started", deque(maxlen=16))
    spawn = ("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; "
             "time.sleep(60)']); print(p.pid, flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", spawn], stdout=subprocess.PIPE, text=True)
    grandchild = None
    try:
        grandchild = int(child.stdout.readline())
        process.started.extend([child.pid, OURS])  # OURS: an earlier evaluation child, exited since
        owners = Owners()
        world.process(child.pid, world.now - 5, util=100)
        world.process(grandchild, world.now - 5, util=100)
        world.busy.append((OURS, world.now - 0.5, world.now - 0.01, 100))
        watch = watch_of(world, owners)
        c = world.evaluate(check(watch, world), child.pid)
        assert c.flags == () and c.waited == 0
        assert owners.snapshot()(grandchild) and owners.snapshot()(os.getpid())
        assert not owners.snapshot()(FOREIGN)
    finally:
        if grandchild:
            os.kill(grandchild, signal.SIGKILL)
        child.kill()
        child.wait()


def test_without_per_process_utilization_the_device_figure_and_presence_decide(world):
    world.process_util = False
    world.process(OURS, world.now - 5)
    world.process(FOREIGN, world.now - 10, world.now + 3, util=100)
    watch = watch_of(world)
    waited = world.evaluate(check(watch, world), OURS + 1)  # device busy with nothing of ours: wait until idle
    assert waited.flags == () and waited.waited >= 3
    world.now += 0.05
    clean = world.evaluate(check(watch, world), OURS + 2)
    assert clean.flags == () and clean.waited == 0
    # An idle context of another process: the device's figure cannot tell whose work it shows while we time,
    # so its presence during the evaluation flags the result.
    world.process(FOREIGN, world.now)
    assert world.evaluate(check(watch, world), OURS + 3).flags == (CONTENDED,)


def test_host_pids_in_a_container_are_counted(world):
    """NVML numbering processes as the host does: none of the listed PIDs is ours, so work is judged by
    count: before an evaluation, any busy process is another's; during one, a second busy process is."""
    owners = Owners(started=lambda: {OURS})
    owners.ours_holding = lambda minor: 2      # our two evaluation children started ahead hold the GPU open
    world.process(HOST + 1, world.now - 5)     # those two, by their host PIDs
    world.process(HOST + 2, world.now - 5)
    watch = watch_of(world, owners)
    clean = world.evaluate(check(watch, world), HOST + 3)
    assert clean.flags == () and clean.waited == 0
    assert not watch.matched
    world.process(HOST + 9, world.now + 1, world.now + 2, util=80)  # another process, during the evaluation
    assert world.evaluate(check(watch, world), HOST + 4).flags == (CONTENDED,)
    world.process(HOST + 8, world.now - 5, world.now + 2, util=100)  # another, before: waited for
    waited = world.evaluate(check(watch, world), HOST + 5)
    assert waited.flags == () and waited.waited >= 2


def test_blind_per_process_utilization_falls_back_to_the_device_figure_between_evaluations(world):
    world.hidden = True                        # samples show nothing, not even our evaluation's 3 s
    watch = watch_of(world)
    assert world.evaluate(check(watch, world), OURS + 1).flags == ()
    assert watch.blind
    world.now += gpu_load.DEVICE_LAG_S         # long enough after ours for the device's figure to be another's
    world.busy.append((FOREIGN, world.now - 5, world.now + 2, 100))  # invisible to the process list
    c = world.evaluate(check(watch, world), OURS + 2)
    assert c.waited >= 2 and c.flags == ()


def test_nvml_failing_midway_costs_no_evaluation(world):
    world.process(FOREIGN, world.now - 10, util=100)
    watch = watch_of(world)
    world.failing = True
    c = world.evaluate(check(watch, world), OURS + 1)
    assert c.flags == () and c.waited == 0


def test_no_nvml_and_no_nvidia_smi_means_no_check_said_once(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    monkeypatch.setattr(gpu_sampler.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpu_load, "_sampler", [])
    monkeypatch.setattr(gpu_load, "_watches", {})
    gpu = DeviceInfo(target="cuda", name="NVIDIA H100 80GB HBM3", index=0, arch="9.0a")
    for _ in range(2):
        c = gpu_load.check_for(gpu, 30.0)
        c.before()
        c.after()
        assert c.flags == () and c.figures == Contention()
    assert sum("contention check off" in r.getMessage() for r in caplog.records) == 1


def test_the_cpu_target_is_not_checked(monkeypatch):
    monkeypatch.setattr(gpu_load, "open_sampler", lambda: pytest.fail("a GPU was queried for a CPU evaluation"))
    monkeypatch.setattr(gpu_load, "_sampler", [])
    c = gpu_load.check_for(DeviceInfo(target="cpu", name="cpu"), 30.0)
    c.before()
    c.after()
    assert c.flags == () and c.figures == Contention()


def test_nvidia_smi_sampler_reads_pids_and_utilization(monkeypatch):
    answers = {"--query-compute-apps=pid": "1234\n5678\n", "--query-gpu=utilization.gpu": "87\n"}

    def run(argv, **kwargs):
        assert argv[-2:] == ["-i", "3"]
        return subprocess.CompletedProcess(argv, 0, stdout=answers[argv[1]], stderr="")

    monkeypatch.setattr(gpu_sampler.subprocess, "run", run)
    smi = NvidiaSmi()
    assert smi.compute_pids(3) == [1234, 5678]
    assert smi.device_util(3) == 87.0
    assert smi.process_util(3, 0.0) is None
    answers["--query-compute-apps=pid"] = ""
    assert smi.compute_pids(3) == []


def test_the_wait_is_a_setting_and_an_option(monkeypatch):
    assert load_settings().contention_wait_s == 30.0
    assert load_settings(contention_wait_s=5).contention_wait_s == 5.0
    monkeypatch.setenv("HARNESS_CONTENTION_WAIT", "0")
    assert load_settings().contention_wait_s == 0.0
    with pytest.raises(ValueError):
        load_settings(contention_wait_s=-1)
    from harness.cli.main import build_parser
    args = build_parser().parse_args(["eval", "--problem", "p", "--contention-wait", "7", "c.py"])
    assert args.contention_wait == 7.0
