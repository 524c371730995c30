"""Builds with nvcc's front ends side by side (fastbuild/nvcc_split.py) against plain nvcc, on the GPU: the same
torch-header relu built both ways through the harness (torch's ninja file, its `-MD` dependency file, the
sandbox), each then evaluated. Both must be correct; the build times are printed. Needs a GPU: `pytest -m gpu`."""
import shutil

import pytest

from harness.config import load_settings
from harness.device import discover, visible_gpus
from harness.eval.bench_candidates import batch
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.fastbuild import front_ends
from harness.problems.index import resolve
from harness.store import Store

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]


class Always(front_ends.FrontEnds):
    def _room(self) -> bool:
        return True


def test_a_split_build_runs_as_plain_nvccs(tmp_path, monkeypatch):
    split_source, plain_source = batch("torch", 2, "nvcc split")
    settings = load_settings(results_dir=tmp_path / "results", timing={"budget_s": 2.0})
    problem = resolve("level1/relu")
    device = discover("cuda")
    monkeypatch.setattr(front_ends, "FRONT_ENDS", Always())
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    with Store(settings.db) as store:
        [(_, split)] = evaluate([Job(problem, candidate_from_source(split_source))], device=device,
                                settings=settings, store=store, run=RunLabel("split", "eval"))
        monkeypatch.setenv("PYTORCH_NVCC", shutil.which("nvcc"))  # the user's own: plain nvcc
        [(_, plain)] = evaluate([Job(problem, candidate_from_source(plain_source))], device=device,
                                settings=settings, store=store, run=RunLabel("plain", "eval"))
    assert split.status == plain.status == "correct", (split.error, plain.error)
    assert "-m harness.child nvcc" in split.build.log, split.build.log[-3000:]
    assert "-m harness.child nvcc" not in plain.build.log
    assert "-MD -MF" in split.build.log  # torch's dependency file, written by nvcc's own -M
    print(f"torch-header relu: built in {split.build.duration_s:.1f} s split, {plain.build.duration_s:.1f} s plain; "
          f"speedups {split.speedup:.2f}x and {plain.speedup:.2f}x")


def test_a_build_with_the_host_header_runs_as_plain_nvccs(tmp_path, monkeypatch):
    """The first torch-header build asks for nvcc's host header (fastbuild/host_pch.py), made after it; the next takes
    it. Both, and one with plain nvcc, must be correct."""
    import json

    from harness.fastbuild.maker import trusted_keys
    from harness.fastbuild.names import HOST_PCH_FILE

    first_source, second_source, plain_source = batch("torch", 3, "host header")
    monkeypatch.setenv("HARNESS_PCH_DIR", str(tmp_path / "pch"))  # made here, by this test's first build
    settings = load_settings(results_dir=tmp_path / "results", timing={"budget_s": 2.0})
    problem = resolve("level1/relu")
    device = discover("cuda")
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    results = {}
    with Store(settings.db) as store:
        for name, source in (("first", first_source), ("second", second_source), ("plain", plain_source)):
            if name == "plain":
                monkeypatch.setenv("PYTORCH_NVCC", shutil.which("nvcc"))
            [(_, results[name])] = evaluate([Job(problem, candidate_from_source(source))], device=device,
                                            settings=settings, store=store, run=RunLabel(name, "eval"))
    assert {name: r.status for name, r in results.items()} == dict.fromkeys(results, "correct"), {
        name: r.error for name, r in results.items()}
    (key,) = [key for key in trusted_keys() if (tmp_path / "pch" / key / HOST_PCH_FILE).is_file()]
    used = [json.loads(line) for path in (tmp_path / "results").rglob("pch-requests.jsonl")
            for line in path.read_text().splitlines()]
    assert {"use": key} in used, used
    print("torch-header relu: built in " + ", ".join(f"{r.build.duration_s:.1f} s {name}"
                                                      for name, r in results.items()))
