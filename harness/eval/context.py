"""What a result is compared against besides the reference beside it: the problem's clean eager and
torch.compile baselines and the device's peaks, as stored, giving its speedup over torch.compile and its
share of the speed of light (against the ceiling faster_than_light uses: roofline.py). Used by the reports and by
the model's feedback."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from harness.eval.roofline import ceiling_ms, sol_share
from harness.store import Store
from harness.types import Baseline, DeviceInfo, EvalResult, Frozen, Peaks


@dataclass(frozen=True)
class CompileBest:
    """The torch.compile mode that ran fastest against eager."""

    kind: str
    ms: float  # its median time
    eager_ms: float  # eager's, measured beside it


class ProblemContext(Frozen):
    """What is known about a problem on a device besides its evaluations."""

    eager: Baseline | None = Field(default=None, description="The clean eager baseline (bytes, FLOPs, time)")
    compiled: dict[str, Baseline] = Field(default_factory=dict, description="torch.compile baselines by kind")
    peaks: Peaks | None = Field(default=None, description="The device's measured peaks")
    dtype: str = Field(default="float32", description="Evaluation dtype")
    device: DeviceInfo | None = Field(default=None, description="The device (its ceiling: datasheet or cores)")

    @property
    def best_compile(self) -> CompileBest | None:
        """The torch.compile mode with the best ratio to eager, among those that ran."""
        timed = [CompileBest(kind, b.timing.median_ms, b.eager_ms) for kind, b in self.compiled.items()
                 if b.timing and b.eager_ms]
        return min(timed, key=lambda best: best.ms / best.eager_ms, default=None)

    @property
    def sol_ms(self) -> float | None:
        """The time no correct result can beat on this device (the ceiling of faster_than_light)."""
        return ceiling_ms(self.eager, self.peaks, self.device, self.dtype) if self.device else None

    def sol_fraction(self, runtime_ms: float | None) -> float | None:
        """The share of the speed of light a time reaches, at most 1; None where it beats the ceiling."""
        return sol_share(self.sol_ms, runtime_ms)

    def record(self, result: EvalResult) -> dict:
        """The flat record `harness eval --json` prints for a result of this problem: its summary, restated over
        torch.compile and the speed of light."""
        return {**result.summary(), "speedup_vs_compile": self.vs_compile(result.speedup),
                "sol_fraction": self.sol_fraction(result.runtime_ms)}

    def vs_compile(self, speedup: float | None) -> float | None:
        """A speedup over eager, restated over the best torch.compile mode."""
        best = self.best_compile
        if speedup is None or best is None:
            return None
        return speedup * best.ms / best.eager_ms


def contexts_for(store: Store, results: list[EvalResult]) -> dict[str, ProblemContext]:
    """The baselines and peaks stored for each problem of these results, on their device."""
    found: dict[str, ProblemContext] = {}
    for r in results:
        if r.problem_sha256 in found:
            continue
        stored = store.baselines(r.problem_sha256, r.device_name, r.target, r.torch_version, r.dtype)
        found[r.problem_sha256] = ProblemContext(
            eager=stored.pop("eager", None), compiled=stored, dtype=r.dtype,
            peaks=store.peaks(r.device_name, r.target, r.torch_version),
            device=DeviceInfo(target=r.target, name=r.device_name))
    return found
