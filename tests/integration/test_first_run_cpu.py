"""A first run on a machine that has measured nothing says what it is doing and shows results as they come: the
machine's peaks, each round's baselines and the batch announced with estimates and reported with what they took;
on the cpu target the cheapest build's problem evaluated, and counted done, before the other builds start."""
from harness import RunRequest, run
from harness.api import RunEvents
from harness.config import load_settings
from harness.eval.phases import Phase, PhaseTook
from harness.types import BuildResult, Candidate, EvalResult

PROBLEMS = ("cpu/relu", "cpu/sum_dim1")


class Recorder(RunEvents):
    """Every event of the run, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def phase(self, phase: Phase) -> None:
        self.seen.append(("phase", phase.announce()))

    def phase_done(self, phase: Phase, took: PhaseTook) -> None:
        assert took.wall_s > 0 and took.cpu_s >= 0
        self.seen.append(("phase done", phase.doing))

    def built(self, candidate: Candidate, build: BuildResult) -> None:
        self.seen.append(("built", str(candidate.path)))

    def evaluated(self, result: EvalResult) -> None:
        self.seen.append(("evaluated", result.problem_id))

    def conversation_done(self, problem_id: str) -> None:
        self.seen.append(("problem done", problem_id))


def test_a_first_run_announces_its_phases_and_counts_problems_done_as_their_results_come(tmp_path, own_machine_store):
    settings = load_settings(results_dir=tmp_path / "results", build_workers=1, timing={"budget_s": 1})
    recorder = Recorder()
    done = run(RunRequest(problems=",".join(PROBLEMS), name="first"), target="cpu", settings=settings,
               events=recorder)
    assert done.board is not None
    assert {row.problem: row.statuses for row in done.board.problems} == {p: {"correct": 1} for p in PROBLEMS}

    seen = recorder.seen
    announced = [text for kind, text in seen if kind == "phase"]
    assert announced[0].startswith("building 2 candidates (1 at a time) and checking and timing 2 (~")
    assert announced[1].startswith("measuring the machine's peaks") and "once per machine" in announced[1]
    # one build worker: two rounds, each measuring its own problem's baseline just before its build
    assert [a.split(" (~")[0] for a in announced[2:4]] == [
        "measuring the reference's baseline of 1 problem (cpu/relu)",
        "measuring the reference's baseline of 1 problem (cpu/sum_dim1)"]
    assert len([kind for kind, _ in seen if kind == "phase done"]) == len(announced)  # every phase reports its end

    # relu's result, and relu counted done, before sum_dim1 is even built
    order = [event for event in seen if event[0] in ("built", "evaluated", "problem done")]
    assert order == [("built", "solutions/reference/cpu/relu.py"), ("evaluated", "cpu/relu"),
                     ("problem done", "cpu/relu"), ("built", "solutions/reference/cpu/sum_dim1.py"),
                     ("evaluated", "cpu/sum_dim1"), ("problem done", "cpu/sum_dim1")]
