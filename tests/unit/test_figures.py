"""An evaluation's figures: typed by meaning, JSON under their flat names, each stage from its own clocks, each
labelled in its unit for a person."""
import pytest

from harness.child import stage_clock
from harness.child.stage_clock import StageClock
from harness.figures import FLAT_NAMES, Contention, Figures, ProcessStart, StageSeconds, unit_of
from harness.report.html import fmt_figure


class Runner:
    """Triton's seconds in the runner, as Remote.jit() reports them: totals so far."""

    def __init__(self, totals):
        self.totals = iter(totals)

    def jit(self):
        return next(self.totals)


def test_each_stage_is_its_own_clock_readings_less_the_jit_seconds_within_it(monkeypatch):
    readings = iter([10.0, 11.0, 14.0, 14.5])
    monkeypatch.setattr(stage_clock, "_clock", lambda: next(readings))
    clock = StageClock(Runner([{}, {"compile": 2.0, "autotune": 0.5}, {"compile": 2.0, "autotune": 0.5}]))
    clock.ends("setup")
    clock.ends("check")  # 3 s, 2.5 s of them Triton's
    clock.ends("time")
    assert clock.seconds == {"setup": 1.0, "check": 0.5, "time": 0.5}
    assert clock.figures() == StageSeconds(setup_s=1.0, check_s=0.5, time_s=0.5, compile_s=2.0,
                                           autotune_s=0.5)


def test_flat_names_are_unique_and_none_is_a_group_s_name():
    """A flat object (JSON, a stored row) is told from the groups by its names."""
    groups = Figures.model_fields
    assert len(FLAT_NAMES) == sum(len(info.annotation.model_fields) for info in groups.values())
    assert not set(FLAT_NAMES) & set(groups)


def test_figures_added_later_keep_what_was_measured_and_unmeasured_ones_stay_out_of_the_json():
    judged = Figures(stages=StageSeconds(setup_s=1.0, check_s=2.0), contention=Contention(cpu_foreign_share=0.01))
    figures = judged.add(stages=StageSeconds(eval_s=4.0), contention=Contention(gpu_check_s=0.02))
    assert figures.stages == StageSeconds(setup_s=1.0, check_s=2.0, eval_s=4.0)
    assert figures.contention == Contention(cpu_foreign_share=0.01, gpu_check_s=0.02)
    assert figures.flat() == {"eval": 4.0, "setup": 1.0, "check": 2.0, "cpu_foreign": 0.01, "contention_check": 0.02}
    assert Figures.model_validate(figures.flat()) == figures


def test_a_process_s_counts_are_whole_numbers_whatever_it_reported():
    assert ProcessStart.reported({"ready_s": 2.5, "device_attempts": 2.0, "other": 1.0}) == ProcessStart(
        ready_s=2.5, device_attempts=2)


def test_every_figure_and_group_has_a_label_and_a_unit():
    """A figure added without a label a person reads, or whose unit its name and type do not say, fails here."""
    for group, info in Figures.model_fields.items():
        assert info.title and "_" not in info.title, group
        for name, spec in info.annotation.model_fields.items():
            assert spec.title and "_" not in spec.title, (group, name)
            assert unit_of(name, spec.annotation) in ("s", "ms", "share", "count")
    with pytest.raises(ValueError, match="'bytes_moved' has no unit"):
        unit_of("bytes_moved", float | None)


def test_labelled_figures_read_in_their_units():
    figures = Figures.model_validate({"build": 21.4, "setup": 0.0312, "judge_device_attempts": 1.0,
                                      "cpu_foreign": 0.7472, "runner_wait_ms": 0.41234, "time": 1234.56})
    shown = [(f.group, f.label, fmt_figure(f)) for f in figures.labelled()]
    assert shown == [("stages", "build", "21.4 s"), ("stages", "set-up", "0.0312 s"), ("stages", "timing", "1235 s"),
                     ("the processes", "runner's first reply", "0.412 ms"),
                     ("the judge's start", "context attempts", "1"),
                     ("other processes", "cores used by others", "75%")]
