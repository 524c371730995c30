"""The problem quality gate: is a problem loadable, deterministic, informative and sensibly sized?

The child (`harness.child.gate`) measures and reports a GateObservation per problem; this module decides.
Every threshold is here, named, and documented in README's "Adding a problem":

- static (no device): the file parses; TAGS name an op family and exactly one of memory-bound /
  compute-bound; a tolerance override carries a comment saying why; Model, get_inputs and
  get_init_inputs fit together (checked on the meta device, which also gives output shapes, bytes
  and FLOPs at any size); a compute-bound problem has a FLOP count (counted or declared).
- full (on the target device): two runs with the same seed agree within the problem's tolerance;
  two seeds differ in at least MIN_SEED_MISMATCH of the elements; the output is not degenerate
  (mostly ~0, constant, nearly constant, passable by a constant, or so small that the absolute
  tolerance swallows it, or NaN/Inf); the tolerance is achievable (the fp32 reference is within half of
  it from the same computation in float64); eager time within EAGER_MS; peak memory within the limits.
"""

from __future__ import annotations

import io
import math
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import ValidationError

from harness.batch_child import run_each
from harness.process import child_env
from harness.protocol import FullObservation, GateObservation, GateSpec, OutputStats, ProblemRef, TensorShape
from harness.types import GateResult, Problem, Target

GateMode = Literal["static", "full"]  # static: no device (meta tensors); full: on the target
BOUND_TAGS = ("memory-bound", "compute-bound")
NEAR_ZERO_MAX = 0.95        # reject when this share of elements is within atol of zero
MIN_REL_STD = 1e-3          # reject when std < this x mean |output| (nearly constant)
MIN_SEED_MISMATCH = 0.01    # two seeds must differ, beyond tolerance, in at least 1% of the elements
WEAK_CHECK_FACTOR = 10.0    # mean |output| must be at least 10 x atol, or atol hides errors of its size
EAGER_MS: dict[str, tuple[float, float]] = {"cuda": (1.0, 1000.0), "cpu": (0.1, 1000.0)}  # no launch overhead on a CPU
MAX_MEMORY_GB = 40.0        # the whole evaluation must fit in this much GPU memory
MARK_MEMORY_GB = 24.0       # above this, the problem must declare MEMORY_GB (so --max-memory-gb can skip it)
TIMEOUT_S = {"static": 120.0, "full": 600.0}  # per problem, including the child's start for the first
MALFORMED = "malformed observation from the gate child (a harness bug)"  # a failure, not a crash of the gate


def metadata_reasons(problem: Problem) -> list[str]:
    """What the file's constants lack; no import needed."""
    reasons = []
    bound = [t for t in problem.tags if t in BOUND_TAGS]
    if len(bound) != 1 or len(problem.tags) < 2:
        reasons.append("TAGS must name the op family and exactly one of 'memory-bound' or 'compute-bound', "
                       "e.g. TAGS = ['matmul', 'compute-bound']")
    for name in uncommented_overrides(problem.source):
        what = OVERRIDDEN.get(name, "the default tolerance")
        reasons.append(f"{name} overrides {what} without a comment saying why "
                       "(put the reason on the line above or at the end of the line)")
    return reasons


OVERRIDES = ("TOLERANCE", "ATOL", "RTOL", "MAX_SPEEDUP", "MIN_COVERAGE")  # each needs a comment saying why
OVERRIDDEN = {"MAX_SPEEDUP": "the plausible speedup ceiling",  # what it overrides; the others: the tolerance
              "MIN_COVERAGE": "the share of the work a candidate's own code must do"}


def uncommented_overrides(source: str) -> list[str]:
    """Override constants assigned at module level with no comment on their line or the line above."""
    comments: set[int] = set()
    assigned: list[tuple[str, int]] = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            comments.add(tok.start[0])
        elif (tok.type == tokenize.NAME and tok.start[1] == 0 and tok.string in OVERRIDES
              and i + 1 < len(tokens) and tokens[i + 1].string == "="):
            assigned.append((tok.string, tok.start[0]))
    return [name for name, line in assigned if not comments & {line, line - 1}]


def _fmt_shape(o: TensorShape) -> str:
    return f"{o.dtype}[{', '.join(map(str, o.shape))}]"


def assess(problem: Problem, mode: GateMode, target: Target, obs: GateObservation | str,
           duration_s: float = 0.0) -> GateResult:
    """Turn the child's observation, or why there is none, into a verdict with reasons (pure: testable without
    torch)."""
    reasons = metadata_reasons(problem)
    warnings: list[str] = []
    fields: dict = {}
    if isinstance(obs, str):
        reasons.append(obs)
    else:
        if obs.flop_count_error:
            warnings.append(f"the FLOP counter failed ({obs.flop_count_error}); declare FLOPS if it matters")
        if obs.full and obs.full.precision_error:
            warnings.append(f"the float64 precision check could not run ({obs.full.precision_error})")
        if obs.meta_error and mode == "static":
            warnings.append(f"meta-device analysis failed ({obs.meta_error}); the full gate derives shapes, "
                            "bytes and FLOPs on the device")
        reasons += output_reasons(obs)
        if (shapes := obs.shapes) is not None:
            counted = obs.flops or None
            fields.update(outputs=tuple(_fmt_shape(o) for o in shapes.outputs),
                          input_bytes=shapes.input_bytes, param_bytes=shapes.param_bytes,
                          output_bytes=shapes.output_bytes,
                          bytes_moved=problem.bytes or shapes.input_bytes + shapes.param_bytes + shapes.output_bytes,
                          flops=problem.flops or counted,
                          flops_source="declared" if problem.flops else ("counted" if counted else None))
            if "compute-bound" in problem.tags and not fields["flops"]:
                reasons.append("tagged compute-bound, but the FLOP counter counts none of its ops; "
                               "declare FLOPS = <minimal floating-point operations>")
        full = obs.full if mode == "full" else None
        if mode == "full" and full is None:
            reasons.append(f"{MALFORMED}: no measurements on the device in the full gate")
        elif full is not None:
            reasons += informative_reasons(full)
            fields.update(eager_ms=full.eager_ms, peak_memory_gb=full.peak_memory_bytes / 1e9)
            reasons += size_reasons(problem, target, full)
        reasons += workload_reasons(problem, mode, target, obs)
    return GateResult(problem_id=problem.id, path=problem.path, target=target, mode=mode,
                      passed=not reasons, reasons=tuple(reasons), warnings=tuple(warnings),
                      duration_s=duration_s, **fields)


def workload_reasons(problem: Problem, mode: GateMode, target: Target, obs: GateObservation) -> list[str]:
    """The same checks on every other workload, each reason naming the workload and its values; the eager time is
    held to its bounds on timed workloads only (a held-out check may be small)."""
    reasons = []
    timed = {w.name for w in problem.workloads if w.timed}
    seen = {w.workload for w in obs.workloads}
    reasons += [f"workload {w.name}: not observed (a harness bug)" for w in problem.workloads[1:] if w.name not in seen]
    for w in obs.workloads:
        where = f"workload {w.workload} {w.values}: "
        if w.error is not None or w.observation is None:
            reasons.append(where + (w.error or f"{MALFORMED}: neither an observation nor an error"))
            continue
        found = output_reasons(w.observation)
        if mode == "full" and (full := w.observation.full) is not None:
            found += informative_reasons(full)
            found += [r for r in size_reasons(problem, target, full)
                      if w.workload in timed or not r.startswith(("too small", "too slow"))]
        reasons += [where + r for r in found]
    return reasons


def output_reasons(obs: GateObservation) -> list[str]:
    """What makes a problem's forward unusable for any answer, as far as the meta device shows."""
    if obs.shapes is None:  # the meta device could not run it: the full gate (and every evaluation) will
        return []
    reasons = [] if obs.shapes.outputs else ["forward returns no tensor"]
    if not obs.shapes.output_is_plain:
        reasons.append("forward returns a tensor subclass; return a plain torch.Tensor")
    return reasons


def where(i: int, count: int, names: tuple[str, ...] = ()) -> str:
    """How a reason names output i of `count` (a training problem's outputs and gradients by their names)."""
    if i < len(names):
        return f"{names[i]}: "
    return f"output[{i}]: " if count > 1 else ""


def informative_reasons(full: FullObservation) -> list[str]:
    """The outputs (a training problem's gradients too) must be deterministic, achievable in fp32 and informative."""
    reasons = []
    atol = full.atol
    count, names = len(full.stats), full.names
    for i, same in enumerate(full.deterministic):
        if not same.ok:
            reasons.append(f"{where(i, count, names)}not deterministic: two runs with the same seed differ "
                           f"({same.message})")
    floating = [i for i, s in enumerate(full.stats) if s.floating]  # precision is compared per floating output
    for i, p in zip(floating, full.precision):
        if not p.ok:
            reasons.append(f"{where(i, count, names)}tolerance too tight for fp32: the reference is not within half "
                           f"the tolerance of the same computation in float64 ({p.message}); raise TOLERANCE (with a "
                           "comment giving this error) or make the problem better conditioned")
    reasons += degenerate_reasons(full.stats, tuple(c.mismatch_fraction for c in full.seed_variation), names)
    for i, s in enumerate(full.stats):
        at = where(i, count, names)
        if s.numel == 0:
            reasons.append(f"{at}empty output")
        if not s.floating:
            continue
        if s.nonfinite:
            reasons.append(f"{at}{s.nonfinite} NaN/Inf values in the reference output")
        spread = _spread(s)
        if s.numel > 1 and not s.constant and spread.near_zero_fraction < NEAR_ZERO_MAX and not s.constant_passes \
                and spread.std < MIN_REL_STD * spread.mean_abs:
            reasons.append(f"{at}nearly constant: std {spread.std:.3g} is below {MIN_REL_STD:g} x mean |x| "
                           f"{spread.mean_abs:.3g}")
        if 0 < spread.mean_abs < WEAK_CHECK_FACTOR * atol and spread.near_zero_fraction < NEAR_ZERO_MAX:
            reasons.append(f"{at}weak check: mean |output| {spread.mean_abs:.3g} is below {WEAK_CHECK_FACTOR:g} x "
                           f"atol ({atol:g}), so errors as large as the values pass; set ATOL lower (with a "
                           "comment) or rescale the inputs")
    return reasons


class _Spread(NamedTuple):
    near_zero_fraction: float
    mean_abs: float
    std: float


def _spread(s: OutputStats) -> _Spread:
    """A floating output's spread, which OutputStats' validator requires of every floating one."""
    if s.near_zero_fraction is None or s.mean_abs is None or s.std is None:
        raise ValueError(f"{MALFORMED}: a floating output's stats lack its spread")
    return _Spread(s.near_zero_fraction, s.mean_abs, s.std)


def degenerate_reasons(stats: tuple[OutputStats, ...], seed_mismatch: tuple[float, ...] | None,
                       names: tuple[str, ...] = ()) -> list[str]:
    """Why reference outputs cannot tell a right answer from a wrong one at the tolerance in force: the same
    for every seed, mostly within atol of zero, one value, or passable by one value. The gate's core, and what
    every evaluation checks (problems given by path or --problems-dir never went through the gate)."""
    reasons = []
    for i, s in enumerate(stats):
        at = where(i, len(stats), names)
        if seed_mismatch is not None and i < len(seed_mismatch) and seed_mismatch[i] < MIN_SEED_MISMATCH:
            reasons.append(f"{at}the same for every seed: only {seed_mismatch[i]:.2%} of elements differ "
                           f"between two seeds beyond the tolerance (need {MIN_SEED_MISMATCH:.0%})")
        if not s.floating:
            if s.constant and s.numel > 1:
                reasons.append(f"{at}constant output")
        elif (zeros := _spread(s).near_zero_fraction) >= NEAR_ZERO_MAX:
            reasons.append(f"{at}mostly zeros: {zeros:.1%} of elements are within atol of 0")
        elif s.numel > 1 and s.constant:
            reasons.append(f"{at}constant output ({s.min:g} everywhere)")
        elif s.constant_passes:
            reasons.append(f"{at}a tensor filled with one value ({s.mean:.6g}) would pass the correctness check")
    return reasons


def size_reasons(problem: Problem, target: Target, full: FullObservation) -> list[str]:
    reasons = []
    low, high = EAGER_MS[target]
    eager = full.eager_ms
    if eager < low:
        scale = math.ceil(low * 2 / max(eager, 1e-3))
        reasons.append(f"too small: the reference takes {eager:.3f} ms on {target} (need >= {low:g} ms so launch "
                       f"overhead does not dominate); scale the sizes up about {scale}x")
    if eager > high:
        reasons.append(f"too slow: the reference takes {eager:.0f} ms on {target} (at most {high:g} ms)")
    if target == "cuda":
        gb = full.peak_memory_bytes / 1e9
        if gb > MAX_MEMORY_GB:
            reasons.append(f"needs {gb:.1f} GB of GPU memory for an evaluation (at most {MAX_MEMORY_GB:g} GB)")
        elif gb > MARK_MEMORY_GB and (problem.memory_gb is None or problem.memory_gb < gb):
            reasons.append(f"needs {gb:.1f} GB of GPU memory: declare MEMORY_GB = {math.ceil(gb)} "
                           f"(required above {MARK_MEMORY_GB:g} GB)")
    return reasons


def read_observation(record: dict) -> GateObservation | str:
    """A result record's observation, or why there is none: the child's error (the problem failed), run_each's
    (it crashed or hung the child), or what is wrong with a malformed observation."""
    if "error" in record:
        return record["error"]
    try:
        return GateObservation.model_validate(record.get("observation"))
    except ValidationError as exc:
        return f"{MALFORMED}: " + "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'observation'}: {e['msg']}" for e in exc.errors())


def run_child_over(problems: list[Problem], mode: GateMode, target: Target, *, log_dir: Path,
                   gpu_index: int | None = None, timeout_s: float | None = None,
                   on_result: Callable[[Problem, GateObservation | str, float], None]) -> None:
    """Observe each problem in one long-lived child; after a crash or a hang, blame that problem and go on.
    `on_result(problem, observation or why there is none, seconds)` is told of each (assess takes both)."""
    by_id = {p.id: p for p in problems}

    def write_spec(remaining: list[str], spec: Path, results: Path) -> None:
        spec.write_text(GateSpec(mode=mode, target=target, results_path=str(results), problems=tuple(
            ProblemRef(id=i, path=by_id[i].path, source=by_id[i].source, atol=by_id[i].atol, rtol=by_id[i].rtol,
                       workloads=by_id[i].workloads, training=by_id[i].training) for i in remaining),
        ).model_dump_json())

    run_each(list(by_id), job="gate", write_spec=write_spec,
             env=child_env({"CUDA_VISIBLE_DEVICES": str(gpu_index) if gpu_index is not None else ""}),
             log_dir=log_dir, log_name=f"gate-{mode}-{target}", timeout_s=timeout_s or TIMEOUT_S[mode],
             timeout_hint="--timeout",
             on_result=lambda i, record, seconds: on_result(by_id[i], read_observation(record), seconds))
