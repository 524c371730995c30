"""Builds with nvcc's front ends side by side (child/nvcc_split.py) against plain nvcc, on the GPU: the same
torch-header relu built both ways through the harness (torch's ninja file, its `-MD` dependency file, the
sandbox), each then evaluated. Both must be correct; the build times are printed. Needs a GPU: `pytest -m gpu`."""
import shutil

import pytest

from harness.config import load_settings
from harness.device import discover, visible_gpus
from harness.eval import build as build_module
from harness.eval.bench import batch
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import evaluate
from harness.problems.index import resolve
from harness.store import Store

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]


class Always(build_module.FrontEnds):
    def _room(self) -> bool:
        return True


def test_a_split_build_runs_as_plain_nvccs(tmp_path, monkeypatch):
    split_source, plain_source = batch("torch", 2, "nvcc split")
    settings = load_settings(results_dir=tmp_path / "results", timing={"budget_s": 2.0})
    problem = resolve("level1/relu")
    device = discover("cuda")
    monkeypatch.setattr(build_module, "FRONT_ENDS", Always())
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    with Store(settings.db) as store:
        [(_, split)] = evaluate([Job(problem, candidate_from_source(split_source))], device=device,
                                settings=settings, store=store, run="split", kind="eval")
        monkeypatch.setenv("PYTORCH_NVCC", shutil.which("nvcc"))  # the user's own: plain nvcc
        [(_, plain)] = evaluate([Job(problem, candidate_from_source(plain_source))], device=device,
                                settings=settings, store=store, run="plain", kind="eval")
    assert split.status == plain.status == "correct", (split.error, plain.error)
    assert "-m harness.child nvcc" in split.build.log, split.build.log[-3000:]
    assert "-m harness.child nvcc" not in plain.build.log
    assert "-MD -MF" in split.build.log  # torch's dependency file, written by nvcc's own -M
    print(f"torch-header relu: built in {split.build.duration_s:.1f} s split, {plain.build.duration_s:.1f} s plain; "
          f"speedups {split.speedup:.2f}x and {plain.speedup:.2f}x")
