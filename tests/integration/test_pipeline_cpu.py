"""The pipelined executor and the Python API on the cpu target: real builds, real children, a real SQLite file."""
import asyncio
import sqlite3

import pytest

from harness import Evaluator
from harness.config import load_settings
from harness.device import discover
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.job import BatchContext
from harness.eval.scheduler import run_jobs
from harness.problems.index import ProblemError, resolve
from tests.conftest import FIXTURES, SOLUTIONS, share_builds

PROBLEM = FIXTURES / "problems" / "relu.py"
CORRECT = (SOLUTIONS / "correct" / "cpu_relu.py").read_text()
WRONG = (SOLUTIONS / "wrong" / "cpu_relu_leaky.py").read_text()


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    results_dir = share_builds(tmp_path_factory.mktemp("results"), tmp_path_factory)
    return load_settings(results_dir=results_dir, timing={"budget_s": 0.5}, trials=2, build_workers=2)


def test_each_source_is_built_once_and_builds_finish_before_cpu_evaluations(settings):
    problem = resolve(str(PROBLEM))
    jobs = [Job(problem, candidate_from_source(source)) for source in (CORRECT, WRONG, CORRECT)]
    happened = []
    results = run_jobs(jobs, BatchContext(discover("cpu"), settings, seed=7),
                       on_built=lambda candidate, build: happened.append(("built", candidate.sha256)),
                       on_evaluated=lambda i, result: happened.append(("evaluated", i)))
    assert [r.status for r in results] == ["correct", "incorrect", "correct"]
    built = [event for event in happened if event[0] == "built"]
    assert sorted(sha for _, sha in built) == sorted({j.candidate.sha256 for j in jobs})  # the same source once
    # on the cpu target the cores are the device: no evaluation while anything builds
    assert happened[:2] == built and sorted(i for kind, i in happened[2:]) == [0, 1, 2]
    for r in results:
        stages, process = r.figures.stages, r.figures.process
        assert None not in (stages.build_s, stages.queue_s, stages.eval_s, stages.setup_s, stages.check_s), stages
        assert stages.eval_s >= stages.setup_s + stages.check_s > 0
        # the judge's exit after its report, then the runner's: inside the evaluation's time, in no stage
        assert 0 <= process.judge_exit_s and 0 <= process.runner_exit_s, process
        assert process.judge_exit_s + process.runner_exit_s < stages.eval_s - stages.check_s
        for side in (r.figures.runner_start, r.figures.judge_start) if stages.time_s else ():  # how each started
            assert 0 < side.imports_s and 0 <= side.device_s and side.imports_s + side.device_s <= side.ready_s + 0.01
    timed, wrong = results[0].figures, results[1].figures
    assert timed.stages.time_s is not None and wrong.stages.time_s is None  # an incorrect one is never timed
    check = timed.check_parts
    assert 0 < check.poisoned_s < timed.stages.check_s  # trial 0's two runs, of five
    parts = [check.inputs_s, check.reference_s, check.call_s, check.compare_s, check.settled_s]
    assert all(seconds > 0 for seconds in parts), parts  # where the check's time went: parts of it
    assert check.poisoned_s < check.call_s < sum(parts) <= timed.stages.check_s
    setup = [timed.setup_parts.reference_s, timed.setup_parts.runner_s]
    assert all(seconds >= 0 for seconds in setup) and 0 < sum(setup) <= timed.stages.setup_s, setup
    assert results[0].build.build_sha256 == results[2].build.build_sha256


def test_python_api_sync_and_async(settings):
    evaluator = Evaluator(target="cpu", settings=settings, run="rl-step-1")
    first = evaluator.evaluate([(str(PROBLEM), CORRECT), (str(PROBLEM), WRONG)])
    assert [r.status for r in first] == ["correct", "incorrect"]
    assert first[0].speedup > 0 and first[1].check.max_abs_err > 0
    assert first[0].counted or "contended" in first[0].flags, first[0].flags  # contended: other processes ran

    async def two_batches_at_once():
        return await asyncio.gather(evaluator.aevaluate([(str(PROBLEM), CORRECT)]),
                                    evaluator.aevaluate([(str(PROBLEM), WRONG)]))
    again, wrong = asyncio.run(two_batches_at_once())
    if "contended" in first[0].flags:  # timed while other processes used the cores: evaluated again
        assert not again[0].cached and again[0].status == "correct"
    else:
        assert again[0].cached and again[0].speedup == first[0].speedup  # the store answers what it has seen
    assert wrong[0].cached and wrong[0].status == "incorrect"
    with sqlite3.connect(settings.db) as db:
        assert db.execute("SELECT kind, COUNT(*) FROM runs JOIN evaluations ON evaluations.run = runs.name "
                          "WHERE runs.name = 'rl-step-1'").fetchone() == ("api", 4)


def test_python_api_rejects_bad_input_before_building(settings):
    evaluator = Evaluator(target="cpu", settings=settings)
    with pytest.raises(ProblemError, match="no_such_problem"):
        evaluator.evaluate([("level1/no_such_problem", CORRECT)])
    with pytest.raises(TypeError, match="must be a str"):
        evaluator.evaluate([(str(PROBLEM), b"class ModelNew: ...")])
    assert evaluator.evaluate([]) == []
