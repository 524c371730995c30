"""What a batch tells whoever watches it: the results as they come (Events), and before them each phase that makes
no result of its own yet takes time (measuring the machine, baselines, precompiled headers, builds), with how long
it should take and, once done, how long it took in wall and CPU seconds (the CPU figure is the honest one on a
machine other work shares)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from harness.types import BuildResult, Candidate, EvalResult

# Typical figures, measured on the idle 2-core CI machine (torch 2.13 CPU, 2026-12-06), where nothing better is
# known; an estimate is a hint to the reader, never an input to a verdict.
PEAKS_S = {"cpu": 9.0, "cuda": 15.0}   # the copy and the GEMMs per dtype (baseline.device_peaks)
CHILD_START_S = 4.0                    # a child's start: Python, torch
BASELINE_SETUP_S = 1.0                 # per problem, beside its timing budget: inputs, the meta-device count
BUILD_S = 8.0                          # a cpu reference's build, no torch header (one with it: ~12 s; a GPU's: more)
EVAL_SETUP_S = 4.0                     # an evaluation beside its timing budget: children, inputs, the check
PCH_S = 50.0                           # torch/extension.h precompiled (~52 CPU s), once per flag set and torch version


@dataclass(frozen=True)
class Phase:
    """A step of a batch: what it does, about how long it should take (None: unknown), and why it is done now."""

    doing: str
    estimate_s: float | None = None
    why: str | None = None

    def announce(self) -> str:
        parts = [f"~{self.estimate_s:.0f} s"] if self.estimate_s is not None else []
        parts += [self.why] if self.why else []
        return self.doing + (f" ({', '.join(parts)})" if parts else "")


@dataclass(frozen=True)
class PhaseTook:
    wall_s: float
    cpu_s: float  # this process and the children it waited for, while the phase ran

    def describe(self) -> str:
        return f"{self.wall_s:.0f} s (CPU {self.cpu_s:.0f} s)"


class Events:
    """Progress callbacks; the CLI draws bars and lines from them, tests ignore them."""

    def phase(self, phase: Phase) -> None: ...
    def phase_done(self, phase: Phase, took: PhaseTook) -> None: ...
    def planned(self, builds: int, evaluations: int) -> None: ...
    def built(self, candidate: Candidate, build: BuildResult) -> None: ...
    def evaluated(self, result: EvalResult) -> None: ...


def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def timed(events: Events, phase: Phase) -> Iterator[None]:
    """Announce `phase`, run the block, and report what it took."""
    events.phase(phase)
    wall, cpu = time.monotonic(), _cpu_s()
    yield
    events.phase_done(phase, PhaseTook(time.monotonic() - wall, _cpu_s() - cpu))
