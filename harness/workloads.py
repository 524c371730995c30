"""Workloads: the input sets a problem is judged on. The problem file as written is the workload `default` (public,
timed, weight 1); its WORKLOADS constant adds others, each the same file with some module constants set to other
values (README, "Adding a problem"):

    WORKLOADS = [
        {"name": "ragged", "set": {"COLS": 1000}, "about": "a row length that is not a multiple of 128"},
        {"name": "drawn", "set": {"ROWS": (1, 64), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
        {"name": "wide", "set": {"COLS": 65536}, "public": True, "timed": True, "weight": 0.5,
         "about": "very long rows"},
    ]

A range (two integers) is drawn per trial from the judge's secret seed; a drawn size is never a multiple of 32 where
the range holds another. A held-out workload (public false, the default) is never shown to the model: the prompt
leaves WORKLOADS out of the source and lists the public ones, and feedback names a held-out workload by its `about`
only, its values and any number in its failure's message masked.
"""

from __future__ import annotations

import math
import random
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from harness.records import Frozen

Value = bool | int | float | str
Range = tuple[int, int]
NAME = re.compile(r"[a-z][a-z0-9_]*")
DRAWN_AVOIDS = 32  # a drawn size is not a multiple of this where its range allows: aligned sizes are what kernels
# specialise on


class Workload(Frozen):
    """One input set of a problem: the file as written with some module constants set to other values."""

    name: str = Field(description="Lower-case identifier, unique in the problem; 'default' is the file as written")
    about: str = Field(description="What kind of input it is, without its values: what feedback says of a held-out "
                                   "workload that failed (e.g. 'a row count that is not a multiple of 128')")
    set: dict[str, Value | Range] = Field(default_factory=dict, description="Module constants and their values "
                                          "here; (lo, hi) is an integer range drawn per trial")
    public: bool = Field(default=False, description="Shown to the model in the prompt; held out otherwise")
    timed: bool = Field(default=False, description="Timed: the speedup is the weighted geometric mean over these")
    weight: float = Field(default=1.0, gt=0, description="Its weight in that mean")
    scale: float = Field(default=1.0, description="Floating inputs are multiplied by this (the input distribution)")
    shift: float = Field(default=0.0, description="and this is added to them")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not NAME.fullmatch(name):
            raise ValueError(f"name {name!r} must be a lower-case identifier (letters, digits, '_')")
        return name

    @field_validator("about")
    @classmethod
    def _about(cls, about: str) -> str:
        if not about.strip():
            raise ValueError("about must say what kind of input the workload is")
        return about.strip()

    @model_validator(mode="after")
    def _ranges(self) -> Workload:
        for constant, value in self.set.items():
            if isinstance(value, tuple) and not (0 <= value[0] <= value[1]):
                raise ValueError(f"range {constant}: {value} must be (lo, hi) with 0 <= lo <= hi")
        if self.timed and self.drawn:
            raise ValueError("a timed workload cannot draw its sizes (its speedups would not compare)")
        if not (math.isfinite(self.scale) and math.isfinite(self.shift)):
            raise ValueError("scale and shift must be finite numbers")
        return self

    @property
    def drawn(self) -> bool:
        return any(isinstance(v, tuple) for v in self.set.values())

    @property
    def held_out(self) -> bool:
        return not self.public

    @property
    def distribution(self) -> tuple[float, float]:
        return self.scale, self.shift

    def values(self, seed: int) -> dict[str, Value]:
        """The constants of one trial: ranges drawn from `seed` (the judge's, per trial), the rest as given."""
        return {constant: draw(value, f"{seed}:{self.name}:{constant}") if isinstance(value, tuple) else value
                for constant, value in self.set.items()}

    def shown(self) -> dict[str, Value | str]:
        """Its constants as the prompt and `problems show` give them: a range as 'lo..hi'."""
        return {c: f"{v[0]}..{v[1]}" if isinstance(v, tuple) else v for c, v in self.set.items()}

    def record(self) -> dict:
        """The JSON record `problems show --json` prints for it."""
        return {"workload": self.name, "public": self.public, "timed": self.timed, "weight": self.weight,
                "about": self.about, "set": self.shown(), "scale": self.scale, "shift": self.shift}


DEFAULT = Workload(name="default", about="the problem as written", public=True, timed=True)


def draw(bounds: Range, key: str) -> int:
    """An integer of [lo, hi], the same for the same key, not a multiple of DRAWN_AVOIDS where the range holds
    another."""
    rng = random.Random(key)
    value = rng.randint(*bounds)
    for _ in range(64):
        if value % DRAWN_AVOIDS:
            break
        value = rng.randint(*bounds)
    return value


WorkloadStatus = Literal["correct", "incorrect", "runtime_error", "compile_error", "rejected", "skipped", "not_run"]


class WorkloadResult(Frozen):
    """What one workload of an evaluation came to: its own verdict, errors and (timed) speedup."""

    name: str = Field(description="The workload's name")
    about: str = Field(description="What kind of input it is")
    public: bool = Field(description="Shown to the model")
    timed: bool = Field(default=False, description="Timed, and part of the speedup")
    weight: float = Field(default=1.0, description="Its weight in the speedup's geometric mean")
    status: WorkloadStatus = Field(description="Its verdict; skipped: too large for the device; not_run: the "
                                               "evaluation ended before it")
    trials: int = Field(default=0, description="Trials run on it")
    values: dict[str, Value] = Field(default_factory=dict, description="The constants of its last trial, drawn "
                                     "ones included (for the user: feedback never shows a held-out one's)")
    max_abs_err: float | None = Field(default=None, description="Largest error against the truth over its trials")
    max_rel_err: float | None = Field(default=None, description="Largest relative error over its trials")
    norm_err: float | None = Field(default=None, description="Largest ||out - truth|| / ||truth|| over its trials")
    message: str | None = Field(default=None, description="What failed, with the values (for the user)")
    note: str | None = Field(default=None, description="Why it was skipped, or that its truth fell back to the "
                                                       "reference")
    ref_ms: float | None = Field(default=None, description="Timed: the reference's median")
    candidate_ms: float | None = Field(default=None, description="Timed: the candidate's median")

    @property
    def speedup(self) -> float | None:
        if self.ref_ms is None or not self.candidate_ms:
            return None
        return self.ref_ms / self.candidate_ms

    def record(self) -> dict:
        """The JSON record `eval --json` prints for it, in the CLI's vocabulary."""
        fields = self.model_dump(exclude={"name"})
        return {"workload": self.name, **fields, "speedup": self.speedup}


def weighted_speedup(results: tuple[WorkloadResult, ...] | list[WorkloadResult]) -> float | None:
    """The weighted geometric mean of the timed workloads' speedups (None unless every timed one has one)."""
    timed = [r for r in results if r.timed]
    weighted = [(r.weight, speedup) for r in timed if (speedup := r.speedup) is not None]
    if not timed or len(weighted) < len(timed):
        return None
    total = sum(weight for weight, _ in weighted)
    return math.exp(sum(weight * math.log(speedup) for weight, speedup in weighted) / total)


NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def mask_numbers(text: str) -> str:
    """`text` with every number standing alone replaced by N (names such as float32 or conv2d keep theirs): what a
    held-out workload's failure may tell the model, whose message could otherwise carry its sizes."""
    return NUMBER.sub("N", text)
