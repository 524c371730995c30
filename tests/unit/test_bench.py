"""The benchmark's candidates and arithmetic (its runs are on real devices: harness bench)."""
import ast
import json
import re

from harness.cli.bench import Passes, speedups
from harness.eval.bench import Measurement
from harness.eval.bench_candidates import batch
from harness.eval.candidate import precheck
from harness.eval.rules import check
from harness.types import Timing
from tests.conftest import eval_result


def cuda_part(source: str) -> str:
    return re.search(r'CUDA = r"""(.*?)"""', source, re.S).group(1)


def test_every_generated_candidate_is_distinct_valid_and_passes_the_rules():
    for shape in ("lean", "torch", "cpp", "triton"):
        sources = batch(shape, 30, "salt")
        assert len(set(sources)) == 30
        assert len({re.sub(r"(//|#) bench .*", "", s) for s in sources}) >= 18  # variants, not just tags
        for source in sources:
            ast.parse(source)
            assert precheck(source) is None and not check(source).rejections, shape
    lean, heavy = batch("lean", 1, "s")[0], batch("torch", 1, "s")[0]
    assert "torch/" not in cuda_part(lean) and "no_implicit_headers=True" in lean
    assert "#include <torch/extension.h>" in cuda_part(heavy)
    assert batch("lean", 2, "a") != batch("lean", 2, "b")  # a new salt, nothing cached
    assert "@triton.jit" in batch("triton", 1, "s")[0] and "load_inline" not in batch("triton", 1, "s")[0]


def test_rates_busy_share_and_overhead():
    passes = [Measurement("pipelined", "lean", 2, 60.0, [eval_result(eval=3.0, check=1.0, time=1.5)] * 30),
              Measurement("one-at-a-time", "lean", 1, 60.0, [eval_result(eval=8.0, check=1.0, time=1.5)] * 2)]
    fast, slow = passes
    assert fast.per_min == 30.0 and slow.per_min == 2.0
    assert fast.busy == 30 * 2.5 / (60.0 * 2)
    assert fast.overhead == 0.5 and slow.overhead == 5.5
    assert fast.summary()["stages_s"]["queue"] is None
    cached = [Measurement("cached-1gpu", "lean", 1, 60.0, [eval_result()] * 10),
              Measurement("cached-2gpu", "lean", 2, 60.0, [eval_result()] * 19)]
    assert speedups(passes + cached) == {"lean: pipelined / one-at-a-time": 15.0, "2 GPUs / 1 GPU (builds cached)": 1.9}


def test_idle_time_and_the_first_wave():
    p = Measurement("pipelined", "lean", 1, 60.0, [eval_result(eval=2.0)] * 20, first_eval_s=12.5)
    assert p.idle_s == 20.0  # 60 s of wall, 40 of them evaluating
    assert p.summary()["device_idle_s"] == 20.0 and p.summary()["first_eval_s"] == 12.5
    two = Measurement("pipelined", "lean", 2, 60.0, [eval_result(eval=2.0)] * 20)
    assert two.idle_s == 40.0 and two.summary()["first_eval_s"] is None


def test_flagged_candidates_are_counted_by_flag():
    flagged = eval_result(eval=2.0).model_copy(update={"flags": ("hidden_work", "noisy_timing")})
    p = Measurement("pipelined", "lean", 1, 60.0, [eval_result(eval=2.0), flagged, flagged])
    assert p.summary()["statuses"] == {"correct": 3}
    assert p.summary()["flags"] == {"hidden_work": 2, "noisy_timing": 2}
    timing = Timing(median_ms=1.9, mean_ms=1.9, std_ms=0.0, min_ms=1.9, n=9, rse=0.0, wall_median_ms=2.4)
    reference = timing.model_copy(update={"wall_median_ms": 2.0})
    timed = flagged.model_copy(update={"runtime": timing, "ref_runtime": reference})
    [candidate] = Measurement("pipelined", "lean", 1, 60.0, [timed]).summary()["per_candidate"]
    assert candidate == {"eval": 2.0, "wall_over_events_ms": 0.5, "ref_wall_over_events_ms": 0.1,
                         "flags": ["hidden_work", "noisy_timing"]}


def test_with_json_each_pass_is_a_line_as_it_ends(capsys):
    """A run cut short (a time limit, Ctrl-C) keeps the passes it finished: each is printed when it ends, with the
    run's facts and the ratios it completes."""
    passes = Passes({"device": "d", "target": "cuda", "problem": "level1/relu", "build_workers": 16})
    passes.add(Measurement("pipelined", "lean", 1, 60.0, [eval_result(eval=2.0)] * 30))
    first = json.loads(capsys.readouterr().out)
    assert first["mode"] == "pipelined" and first["candidates"] == 30 and first["ratios"] == {}
    assert first["device"] == "d" and first["problem"] == "level1/relu" and first["build_workers"] == 16
    passes.add(Measurement("one-at-a-time", "lean", 1, 60.0, [eval_result(eval=8.0)] * 3))
    second = json.loads(capsys.readouterr().out)
    assert second["mode"] == "one-at-a-time" and second["ratios"] == {"lean: pipelined / one-at-a-time": 10.0}
    Passes(None).add(Measurement("pipelined", "lean", 1, 60.0, [eval_result(eval=2.0)]))  # without --json: stderr only
    assert capsys.readouterr().out == ""
