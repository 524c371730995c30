"""What the CUDA and Triton prompts teach must itself be right: the worked examples build, are correct, and the
GPU facts the prompt quotes are queried from the device. Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.config import load_settings
from harness.device import discover, visible_gpus
from harness.eval.candidate import load_candidate
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.facts import gather
from harness.problems.index import parse_problem
from harness.store import Store
from tests.conftest import REPO

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]


@pytest.mark.parametrize("example", ["example", "training"])
@pytest.mark.parametrize("kind", ["cuda", "triton"])
def test_worked_example_is_correct(tmp_path, kind, example):
    problem = parse_problem(REPO / "prompts" / kind / f"{example}_problem.py")
    job = Job(problem, load_candidate(str(REPO / "prompts" / kind / f"{example}_solution.py")))
    settings = load_settings(results_dir=tmp_path, timing={"budget_s": 3.0})
    with Store(settings.db) as store:
        ((_, result),) = evaluate([job], device=discover("cuda"), settings=settings, store=store,
                                  run=RunLabel("ex", "eval"))
    print(f"\n{kind} {example}: {result.status}, {result.runtime_ms} ms vs {result.ref_runtime_ms} ms, "
          f"build {result.build.duration_s:.1f} s")
    assert result.status == "correct", result.error
    assert result.counted, result.flags
    # a batch with a Triton candidate: its runner made Triton's driver while it started (the figure only where that
    # worked), not at the first launch
    assert ((result.figures.runner_start.triton_s or 0) > 0) == (kind == "triton"), result.figures


def test_gpu_facts_come_from_the_device():
    facts = gather(discover("cuda"))
    print(f"\n{facts.model_dump()}")
    assert facts.sm_count and facts.sm_count > 0 and facts.compute_capability
    assert facts.memory_gb and facts.memory_gb > 1 and facts.l2_cache_mb and facts.l2_cache_mb > 0
