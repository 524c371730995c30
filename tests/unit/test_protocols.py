"""The typed child protocols: what the gate and baseline children are told (specs) and what the gate child reports
(GateObservation) survive JSON both ways, and the parent turns a malformed report into that problem's failure."""

import json
import math
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from harness.batch_child import append_line
from harness.child.gate import main as child_main
from harness.problems import gate
from harness.problems.index import parse_problem
from harness.protocol import (
    BaselineItem,
    BaselineSpec,
    FullObservation,
    GateObservation,
    GateSpec,
    OutputStats,
    ProblemRef,
    ShapeFacts,
    TensorComparison,
    TensorShape,
)

SHAPES = ShapeFacts(outputs=(TensorShape(shape=(8, 16), dtype="float32"),),
                    inputs=(TensorShape(shape=(8, 16), dtype="float32"), TensorShape(shape=(), dtype="int64")),
                    input_bytes=520, param_bytes=0, output_bytes=512, output_is_plain=True)
FLOATING = OutputStats(numel=128, floating=True, constant=False, nonfinite=0, near_zero_fraction=0.1, mean=0.5,
                       mean_abs=0.6, std=0.3, min=-1.0, max=1.0, constant_passes=False)
ALL_INF = OutputStats(numel=4, floating=True, constant=False, nonfinite=4, near_zero_fraction=0.0, mean=0.0,
                      mean_abs=0.0, std=0.0, min=math.inf, max=-math.inf, constant_passes=False)
SAME = TensorComparison(ok=True, mismatch_fraction=0.0, max_abs_err=0.0, max_rel_err=0.0)
OTHER = TensorComparison(ok=False, mismatch_fraction=0.9, message="output mismatch: ...", max_abs_err=math.inf,
                         max_rel_err=2.0)
FULL = FullObservation(atol=1e-4, rtol=1e-4, eager_ms=2.5, peak_memory_bytes=4096, deterministic=(SAME,),
                       seed_variation=(OTHER,), stats=(FLOATING,), precision=(SAME,))
OBSERVATIONS = [
    GateObservation(init_inputs=2, shapes=SHAPES, flops=1024),  # static gate
    GateObservation(init_inputs=0, meta_error="NotImplementedError: aten::nonzero"),  # static, meta failed
    GateObservation(init_inputs=1, shapes=SHAPES, flops=1024, full=FULL),  # full gate
    GateObservation(init_inputs=1, shapes=SHAPES, meta_error="x", flop_count_error="y",  # full, recovered
                    full=FULL.model_copy(update={"stats": (ALL_INF, OutputStats(numel=0),
                                                           OutputStats(numel=3, floating=False, constant=True)),
                                                 "precision": (), "precision_error": "no float64 kernel"})),
]
MODELS: list[BaseModel] = [
    ProblemRef(id="level1/relu", path="/p/level1/relu.py", source="class Model: ...\n"),
    ProblemRef(id="level1/softmax", path="/p/level1/softmax.py", source="", atol=1e-5, rtol=1e-3),
    GateSpec(mode="full", target="cpu", results_path="/tmp/r.jsonl",
             problems=(ProblemRef(id="a", path="/p/a.py", source="", atol=1e-2),)),
    BaselineItem(id="cpu/relu", path="/p/cpu/relu.py", source="", kinds=("eager", "compile")),
    BaselineSpec(problems=(BaselineItem(id="cpu/relu", path="/p/cpu/relu.py", source="", rtol=1e-3, kinds=("eager",)),),
                 target="cpu", seed=7, results_path="/tmp/r.jsonl"),
    SHAPES.outputs[0], SHAPES, SAME, OTHER, FLOATING, ALL_INF, FULL, *OBSERVATIONS,
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_each_model_round_trips_through_json(model):
    assert type(model).model_validate_json(model.model_dump_json()) == model  # specs: a file
    assert type(model).model_validate(json.loads(json.dumps(model.model_dump(mode="json")))) == model  # lines


@pytest.mark.parametrize("obs", OBSERVATIONS)
def test_an_observation_line_as_the_child_writes_it_reads_back_the_same(obs, tmp_path):
    lines = tmp_path / "results.jsonl"
    append_line(lines, {"id": "p", "observation": obs.model_dump(mode="json")})  # as harness.child.gate.main
    assert gate.read_observation(json.loads(lines.read_text())) == obs


def test_an_unknown_field_is_rejected_so_the_two_sides_cannot_drift():
    with pytest.raises(ValidationError, match="eager_rse"):
        FullObservation.model_validate({**FULL.model_dump(), "eager_rse": 0.01})


def test_floating_stats_must_be_complete():
    with pytest.raises(ValidationError, match="a floating output's stats lack near_zero_fraction, mean"):
        OutputStats(numel=4, floating=True, constant=False, nonfinite=0, mean_abs=1.0, std=1.0, min=0.0, max=1.0,
                    constant_passes=False)
    with pytest.raises(ValidationError, match="an integer output's stats lack constant"):
        OutputStats(numel=4, floating=False)


def test_a_malformed_observation_is_a_clear_reason():
    broken = OBSERVATIONS[2].model_dump(mode="json")
    del broken["init_inputs"]
    del broken["full"]["stats"][0]["std"]
    why = gate.read_observation({"id": "p", "observation": broken})
    assert why == (f"{gate.MALFORMED}: init_inputs: Field required; "
                   "full.stats.0: Value error, a floating output's stats lack std")
    assert gate.read_observation({"id": "p"}).startswith(f"{gate.MALFORMED}: observation: Input should be")
    assert gate.read_observation({"error": "timed out after 20 s (--timeout)"}) == "timed out after 20 s (--timeout)"


PROBLEM = '''
import torch
import torch.nn as nn

TAGS = ["elementwise", "memory-bound"]


class Model(nn.Module):
    def forward(self, x):
        return x * 2, torch.full((4,), float("inf")), x.argmax(dim=1)


def get_inputs():
    return [torch.rand(64, 64)]


def get_init_inputs():
    return []
'''


def problem_file(tmp_path: Path, name: str):
    path = tmp_path / "level1" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(PROBLEM)
    return parse_problem(path, tmp_path)


def test_a_malformed_observation_fails_its_problem_and_the_gate_run_goes_on(tmp_path, monkeypatch):
    problems = [problem_file(tmp_path, "broken"), problem_file(tmp_path, "fine")]
    good = OBSERVATIONS[0].model_dump(mode="json")
    broken = {k: v for k, v in good.items() if k != "init_inputs"}

    def fake_run_each(ids, *, write_spec, on_result, **_):  # the child's lines, as run_each hands them over
        spec, results = tmp_path / "spec.json", tmp_path / "results.jsonl"
        write_spec(ids, spec, results)
        sent = GateSpec.model_validate_json(spec.read_text())
        assert [p.id for p in sent.problems] == ids and sent.mode == "static" and sent.results_path == str(results)
        on_result(ids[0], {"id": ids[0], "observation": broken}, 0.1)
        on_result(ids[1], {"id": ids[1], "observation": good}, 0.1)

    monkeypatch.setattr(gate, "run_each", fake_run_each)
    results = {}
    gate.run_child_over(problems, "static", "cuda", log_dir=tmp_path / "logs",
                        on_result=lambda p, obs, s: results.update({p.id: gate.assess(p, "static", "cuda", obs, s)}))
    assert results["level1/broken"].reasons == (f"{gate.MALFORMED}: init_inputs: Field required",)
    assert not results["level1/broken"].passed
    assert results["level1/fine"].passed, results["level1/fine"].reasons


@pytest.mark.parametrize("mode", ["static", "full"])
def test_the_gate_child_writes_observations_the_parent_reads(mode, tmp_path):
    path = Path(problem_file(tmp_path, "three").path)
    spec, results = tmp_path / "spec.json", tmp_path / "results.jsonl"
    spec.write_text(GateSpec(mode=mode, target="cpu", results_path=str(results), problems=(
        ProblemRef(id="three", path=str(path), source=path.read_text()),
        ProblemRef(id="missing", path=str(tmp_path / "missing.py"), source="import a_module_nobody_has\n"),
    )).model_dump_json())
    assert child_main([str(spec)]) == 0  # the child's side, run in this process
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [line.get("start") for line in lines[::2]] == ["three", "missing"]
    obs, missing = (gate.read_observation(line) for line in lines[1::2])
    assert isinstance(missing, str) and missing.startswith("importing the problem failed")
    assert isinstance(obs, GateObservation) and obs.init_inputs == 0 and obs.flops is not None
    assert [gate._fmt_shape(o) for o in obs.shapes.outputs] == ["float32[64, 64]", "float32[4]", "int64[64]"]
    if mode == "static":
        assert obs.full is None
        return
    doubled, infinite, argmax = obs.full.stats
    assert doubled.floating and not doubled.nonfinite and 0 < doubled.mean_abs
    assert infinite.nonfinite == 4 and infinite.min == math.inf and infinite.max == -math.inf  # Infinity in JSON
    assert argmax.floating is False and argmax.constant is not None
    assert [c.ok for c in obs.full.deterministic] == [True] * 3 and len(obs.full.precision) == 2
    assert obs.full.eager_ms > 0 and obs.full.peak_memory_bytes > 0
    result = gate.assess(problem_file(tmp_path, "three"), "full", "cpu", obs)
    assert any("NaN/Inf values" in r for r in result.reasons), result.reasons
