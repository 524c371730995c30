"""How a candidate's output is judged correct: the check (against the float64 truth, or allclose against the
reference as other harnesses do), its tolerances by dtype, and the verdict it reaches.

The truth check, decided per floating output by child/truth.py (README, "How a candidate is evaluated"): with T the
reference computed in float64 on the same inputs and parameters, R the reference in the working dtype and C the
candidate, C is correct when

  elementwise  |C - T| <= atol + rtol * |T| + ELEMENT_FACTOR * max |R - T|     (at every element)
  normwise     ||C - T|| <= NORM_FACTOR * ||R - T|| + rtol * ||T||              (2-norms over the output)

and C is finite wherever R is (NaN and Inf where R has them must match). atol and rtol are the dtype's (or the
problem's own, never under the dtype's in half precision). Where float64 cannot run the reference, T is R.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.records import Frozen

# atol = rtol by evaluation dtype. A problem's own TOLERANCE / ATOL / RTOL is for fp32: in half precision these
# are the least that holds.
DTYPE_TOLERANCE = {"float32": 1e-4, "float64": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
HALF_DTYPES = ("float16", "bfloat16")

# How much further from the truth than the reference a candidate may be, where the tolerance alone does not cover it
# (the reference's own error above atol, as near-zero entries of a long fp32 dot product have). A sequential fp32 sum
# is up to 9x further from float64 than PyTorch's blocked one over 4096-long dot products (256 x 4096 x 256, rand and
# randn, measured on the CPU), so 16x leaves an honest order of summation room; a kernel in bf16 or fp16 where fp32 is
# asked is 50-5000x further, and outside the tolerance too.
ELEMENT_FACTOR = 16.0
NORM_FACTOR = 16.0

CheckMode = Literal["truth", "allclose"]
# Named checks of other harnesses, for comparisons and audits of their claims: allclose against the reference at
# their tolerances (fp32, half precision).
PRESETS: dict[str, tuple[float, float]] = {"kernelbench": (1e-4, 1e-2), "kernelbench-v0": (1e-2, 1e-2)}
CHECK_NAMES = ("truth", "allclose", *PRESETS)


def tolerances(dtype: str, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """The tolerances for `dtype`, a problem's own (`atol`, `rtol`; None: the dtype's) never under the dtype's in
    half precision."""
    default = DTYPE_TOLERANCE.get(dtype, 1e-4)
    floor = default if dtype in HALF_DTYPES else 0.0
    return (default if atol is None else max(atol, floor)), (default if rtol is None else max(rtol, floor))


class CheckSpec(Frozen):
    """Which check decides correctness, and at which tolerances."""

    name: str = Field(default="truth", description="truth, allclose, or a preset (kernelbench, kernelbench-v0)")
    mode: CheckMode = Field(default="truth", description="truth: against the float64 reference (the bound above); "
                                                         "allclose: |out - ref| <= atol + rtol |ref| against the "
                                                         "reference in the working dtype")
    atol: float | None = Field(default=None, description="Absolute tolerance; None: the dtype's or the problem's")
    rtol: float | None = Field(default=None, description="Relative tolerance; None: the dtype's or the problem's")

    def tolerances(self, dtype: str, problem_atol: float | None, problem_rtol: float | None) -> tuple[float, float]:
        """The tolerances this check uses for a problem in `dtype`: its own where it has them, else the problem's
        (or the dtype's)."""
        atol, rtol = tolerances(dtype, problem_atol, problem_rtol)
        return (atol if self.atol is None else self.atol), (rtol if self.rtol is None else self.rtol)


def check_spec(name: str, dtype: str = "float32", atol: float | None = None,
               rtol: float | None = None) -> CheckSpec:
    """The check called `name` (CHECK_NAMES) in `dtype`; `atol`/`rtol` replace its tolerances."""
    if name in PRESETS:
        full, half = PRESETS[name]
        default = half if dtype in HALF_DTYPES else full
        return CheckSpec(name=name, mode="allclose", atol=default if atol is None else atol,
                         rtol=default if rtol is None else rtol)
    if name not in ("truth", "allclose"):
        raise ValueError(f"unknown check {name!r}: use one of {', '.join(CHECK_NAMES)}")
    mode: CheckMode = "truth" if name == "truth" else "allclose"
    return CheckSpec(name=name, mode=mode, atol=atol, rtol=rtol)


TRUTH = CheckSpec()


class OtherCheck(Frozen):
    """A second check's verdict on the same outputs, reached beside the one that decides (`harness audit`: the
    claim's own check)."""

    name: str = Field(description="The check, as CheckSpec.name")
    atol: float = Field(description="Absolute tolerance it used")
    rtol: float = Field(description="Relative tolerance it used")
    ok: bool | None = Field(description="It passed every output it saw; None: nothing was compared")
    compared: int = Field(default=0, description="Outputs it compared (trials and re-checked timed calls)")
    message: str | None = Field(default=None, description="Its first failure, or None")


class CheckResult(Frozen):
    """Correctness verdict over several seeded trials."""

    status: Literal["correct", "incorrect"] = Field(description="Verdict over all trials")
    trials: int = Field(description="Trials run (stops at the first failing one)")
    max_abs_err: float | None = Field(default=None, description="Largest |out - expected| over compared elements "
                                      "(expected: the truth, or the reference under allclose)")
    max_rel_err: float | None = Field(default=None, description="Largest |out - expected| / max(|expected|, atol)")
    mismatch_fraction: float | None = Field(default=None, description="Share of elements outside the bound")
    atol: float = Field(description="Absolute tolerance used")
    rtol: float = Field(description="Relative tolerance used")
    message: str | None = Field(default=None, description="What failed, for the user and the model")
    check: str = Field(default="allclose", description="The check that decided: truth, allclose or a preset")
    truth: Literal["float64", "reference"] | None = Field(default=None, description="truth check: what the truth "
                                                          "was (reference: float64 could not run it)")
    norm_err: float | None = Field(default=None, description="truth check: the largest ||out - truth|| / ||truth|| "
                                   "over the compared outputs")
    ref_norm_err: float | None = Field(default=None, description="truth check: the same of the reference in the "
                                       "working dtype, at that output")
    other: OtherCheck | None = Field(default=None, description="A second check's verdict on the same outputs")
