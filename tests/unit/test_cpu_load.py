"""Contention on the cpu target: other processes' share of the cores while something is timed."""
import subprocess
import sys
import time

import pytest

from harness.child import observe as cpu_load
from harness.child.observe import (
    Load,
    Sample,
    Watch,
    load_between,
    process_ticks,
)
from harness.cpu_stat import cpu_ticks
from harness.eval.plausibility import measurement_flags
from harness.figures import Contention, Figures
from harness.protocol import WorkerReport
from harness.types import DeviceInfo, Timing

CPU = DeviceInfo(target="cpu", name="cpu")


def contended(load: Load | None) -> bool:
    """What the parent decides from the share the child reports (the child decides nothing)."""
    timing = Timing(median_ms=1.0, mean_ms=1.0, std_ms=0.0, min_ms=1.0, n=10, rse=0.0)
    figures = Figures(contention=Contention(cpu_foreign_share=load.foreign if load else None))
    report = WorkerReport(status="correct", runtime=timing, ref_runtime=timing, device_name="cpu",
                          torch_version="t", figures=figures)
    return "contended" in measurement_flags(report, CPU)

STAT = """cpu  172211 0 15967 68806 651 0 81 171 0 0
cpu0 82090 5 6530 40002 221 1 8 68 0 0
cpu1 90120 0 9437 28804 429 0 72 103 7 0
cpu10 1 1 1 1 1 1 1 1 0 0
intr 142070 0 0
ctxt 123
"""


def test_busy_and_steal_ticks_of_the_usable_cores():
    # user + nice + system + irq + softirq + steal; idle and iowait are not busy, guest is inside user
    assert cpu_ticks(STAT, {0}) == (82090 + 5 + 6530 + 1 + 8 + 68, 68)
    assert cpu_ticks(STAT, {0, 1}) == (88702 + 90120 + 9437 + 72 + 103, 68 + 103)
    assert cpu_ticks(STAT, {1, 10})[0] == 99732 + 6  # cpu10 is not cpu1
    assert cpu_ticks(STAT, {5}) is None


def test_own_ticks_read_past_a_command_name_with_spaces_and_parentheses():
    stat = "4242 (evil) name) R 1 2 3 0 -1 4194304 100 0 0 0 700 42 9 9 20 0 3 0 129159"
    assert process_ticks(stat) == 742


def test_other_processes_share_is_busy_minus_own_over_cores_and_wall():
    start = Sample(wall=10.0, busy=1000, steal=5, own=300)
    # 2 s on 2 cores at 100 ticks/s = 400 ticks; the cores were busy 380 of them, 150 of those ours
    load = load_between(start, Sample(wall=12.0, busy=1380, steal=25, own=450), cores=2, hz=100)
    assert load == Load(foreign=pytest.approx(230 / 400), steal=pytest.approx(20 / 400), wall_s=2.0)
    assert contended(load)
    # only our own work: nothing foreign, even where accounting puts our ticks above the cores' (clamped at 0)
    mine = load_between(start, Sample(wall=12.0, busy=1390, steal=5, own=700), cores=2, hz=100)
    assert mine.foreign == 0.0 and not contended(mine)
    quiet = load_between(start, Sample(wall=12.0, busy=1180, steal=5, own=300 + 150), cores=2, hz=100)
    assert quiet.foreign == pytest.approx(30 / 400) and not contended(quiet)  # 7.5 %: below 10 %
    assert load_between(start, start, cores=2) is None
    assert not contended(None)


def test_a_watch_on_the_cuda_target_measures_nothing():
    assert Watch("cuda").stop() == Contention()


def test_idle_jitter_is_a_relative_spread():
    jitter = cpu_load.spin_jitter(spins=8, spin_s=0.0005)
    assert jitter is not None and 0.0 <= jitter < 10.0


@pytest.mark.skipif(cpu_load.sample(cpu_load.usable_cpus()) is None, reason="no /proc/stat (not Linux)")
def test_two_busy_loops_make_a_sleeping_watch_contended():
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.3)  # started
        watch = Watch("cpu")
        time.sleep(1.0)  # this process does nothing: whatever ran on the cores was someone else
        figures = watch.stop()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    cores = len(cpu_load.usable_cpus())
    # two loops keep two cores busy, however many there are (up to the whole machine)
    assert figures.cpu_foreign_share >= min(1.0, 2 / cores) * 0.7, figures
    assert None not in (figures.cpu_jitter_share, figures.cpu_foreign_share, figures.cpu_steal_share), figures
    assert contended(Load(foreign=figures.cpu_foreign_share, steal=figures.cpu_steal_share, wall_s=1.0))
