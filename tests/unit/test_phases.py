"""A batch says what it is doing: each phase announced with its estimate and reported with what it took (phases.py),
printed on stderr by the CLI; on the cpu target the cheapest builds' jobs form a first round (pipeline.rounds)."""
import subprocess
import sys

from harness.cli.progress import ConsoleEvents
from harness.config import load_settings
from harness.eval.baseline import baselines_phase
from harness.eval.candidate import candidate_from_source
from harness.eval.job import Job
from harness.eval.phases import Events, Phase, PhaseTook, timed
from harness.eval.pipeline import rounds
from harness.problems.index import resolve
from harness.types import DeviceInfo

CPU, GPU = DeviceInfo(target="cpu", name="cpu"), DeviceInfo(target="cuda", name="gpu", arch="9.0")
CPP = 'from torch.utils.cpp_extension import load_inline\nload_inline(name="x{n}", cpp_sources="")\n'
CUDA = ('from torch.utils.cpp_extension import load_inline\n'
        'load_inline(name="y{n}", cpp_sources="", cuda_sources="__global__ void k() {{}}")\n')


def job(problem: str, source: str) -> Job:
    return Job(resolve(problem), candidate_from_source(source))


class Recorder(Events):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Phase, PhaseTook | None]] = []

    def phase(self, phase: Phase) -> None:
        self.seen.append(("phase", phase, None))

    def phase_done(self, phase: Phase, took: PhaseTook) -> None:
        self.seen.append(("done", phase, took))


def test_a_phase_is_announced_with_its_estimate_and_reported_with_what_it_took_children_included():
    recorder, phase = Recorder(), Phase("measuring something", 25.0, "once per machine")
    assert phase.announce() == "measuring something (~25 s, once per machine)"
    assert Phase("doing").announce() == "doing"
    with timed(recorder, phase):
        assert [kind for kind, *_ in recorder.seen] == ["phase"]
        # a child's CPU seconds are the phase's: on a shared machine they are the honest figure
        subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    (kind, announced, _), (done, reported, took) = recorder.seen
    assert (kind, done) == ("phase", "done") and announced is reported is phase
    assert took is not None and took.cpu_s > 0 and took.wall_s > 0
    assert took.describe().endswith(" s)") and "CPU" in took.describe()


def test_the_console_prints_each_phase_and_its_end(capsys):
    events = ConsoleEvents()
    with events:
        events.phase(Phase("making the C++ precompiled header", 40.0, "once per flag set"))
        events.phase_done(Phase("making the C++ precompiled header: torch/extension.h"), PhaseTook(41.2, 39.7))
    err = capsys.readouterr().err
    assert "making the C++ precompiled header (~40 s, once per flag set)" in err
    assert "making the C++ precompiled header: done in 41 s (CPU 40 s)" in err


def test_a_baseline_phase_names_its_problems_and_budgets_each_side_timed():
    relu, softmax = resolve("cpu/relu"), resolve("cpu/softmax")
    eager = baselines_phase([(relu, ["eager"]), (softmax, ["eager"])], budget_s=5.0)
    assert "2 problems (cpu/relu, cpu/softmax)" in eager.doing
    with_compile = baselines_phase([(relu, ["eager", "compile"]), (softmax, ["eager"])], budget_s=5.0)
    assert eager.estimate_s is not None and with_compile.estimate_s == eager.estimate_s + 2.5  # half of 5 a side


def test_on_the_cpu_target_the_cheapest_candidates_one_per_build_worker_form_the_first_round():
    jobs = [job("cpu/relu", CUDA.format(n=0)), job("cpu/softmax", CPP.format(n=1)), job("cpu/relu", CPP.format(n=2)),
            job("cpu/sum_dim1", CPP.format(n=1)), job("cpu/rms_norm", CUDA.format(n=3))]
    two = load_settings(build_workers=2)
    # the two cheapest distinct candidates (C++ alone), every job of each (a candidate on two problems) first
    assert rounds(jobs, CPU, two) == [[1, 2, 3], [0, 4]]
    assert rounds(jobs, CPU, load_settings(build_workers=1)) == [[1, 3], [0, 2, 4]]
    assert rounds(jobs[:2], CPU, two) == [[0, 1]]  # no more candidates than workers: one round
    assert rounds(jobs, GPU, two) == [[0, 1, 2, 3, 4]]  # a GPU evaluates as builds land
    assert rounds(jobs, CPU, load_settings(build_workers=2, executor="ray")) == [[0, 1, 2, 3, 4]]


def test_a_problems_baseline_is_asked_for_once_in_the_round_of_its_first_job(monkeypatch, tmp_path):
    """No candidate of a problem runs before its baseline: a problem whose cheap candidate leads the first round is
    measured there, and not again (after that candidate ran) in the round of its other candidate."""
    from harness.eval import pipeline
    from harness.store import Store

    asked, batches = [], []
    monkeypatch.setattr(pipeline, "device_peaks", lambda *args, **kwargs: None)
    monkeypatch.setattr(pipeline, "measure_baselines",
                        lambda problems, *args, **kwargs: asked.append([p.id for p in problems]) or {})
    monkeypatch.setattr(pipeline, "run_jobs", lambda part, context, *args, **kwargs: batches.append(
        [(job.problem.id, job.candidate.source) for job in part]))
    jobs = [job("cpu/relu", CPP.format(n=0)), job("cpu/softmax", CPP.format(n=1)), job("cpu/relu", CUDA.format(n=2))]
    with Store(tmp_path / "h.db") as store:
        pipeline.run_pending(jobs, CPU, load_settings(results_dir=tmp_path, build_workers=1), store,
                             on_built=lambda *_: None, on_evaluated=lambda *_: None)
    assert [[problem for problem, _ in batch] for batch in batches] == [["cpu/relu"], ["cpu/softmax", "cpu/relu"]]
    assert asked == [["cpu/relu"], ["cpu/softmax"]]
