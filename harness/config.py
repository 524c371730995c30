"""Settings: built-in defaults < environment (HARNESS_*) < command-line flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from harness.types import Frozen, TimingSettings


class Settings(Frozen):
    """Everything an evaluation needs to know besides the problems and candidates."""

    results_dir: Path = Field(default=Path("results"), validate_default=True,
                              description="Where harness.db and the build cache live")
    db_path: Path | None = Field(default=None, description="SQLite file; default <results_dir>/harness.db")
    trials: int = Field(default=5, ge=1, description="Correctness trials, each with fresh inputs and a new seed")
    build_timeout_s: float = Field(default=600.0, gt=0, description="Kill a build after this long")
    eval_timeout_s: float = Field(default=300.0, gt=0, description="Kill an evaluation child after this long")
    build_workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1,
                               description="Builds run in parallel")
    max_jobs: int = Field(default=2, ge=1, description="ninja parallelism inside one build (MAX_JOBS)")
    executor: Literal["local", "ray"] = Field(default="local", description="local: this machine's CPUs and GPUs; "
                                              "ray: tasks on a Ray cluster (pip install 'kernel-harness[ray]')")
    ray_address: str | None = Field(default=None, description="Ray cluster to join (default: $RAY_ADDRESS, else a "
                                                              "local one)")
    gpus: int = Field(default=0, ge=0, description="Evaluate on at most this many GPUs at once (0: every visible GPU "
                                                   "of the first one's model)")
    dtype: str = Field(default="float32", description="Floating inputs and parameters are cast to this")
    timing: TimingSettings = Field(default_factory=TimingSettings, description="Adaptive timing settings")
    force: bool = Field(default=False, description="Build and evaluate again from scratch, even if the store and "
                                                   "the build cache have the result")
    rebuild: bool | None = Field(default=None, description="Build again even if built before (None: as force; "
                                                           "harness bench re-evaluates built candidates)")
    max_speedup: float = Field(default=10.0, gt=1, description="A speedup over eager above this is flagged "
                                                               "implausible_speedup and not counted")
    compile_baselines: bool = Field(default=False, description="Also measure the torch.compile baselines of the "
                                                               "problems evaluated (cached; `harness baseline` "
                                                               "measures them on their own)")
    contention_wait_s: float = Field(default=30.0, ge=0, description="On a GPU, wait at most this long for other "
                                     "processes' work on it to stop before timing; if it goes on, or shows during "
                                     "the evaluation, the result is flagged contended and not counted")
    static_rules: bool = Field(default=True, description="Apply the static integrity rules; off only to test "
                                                         "the runtime defenses on their own")

    @field_validator("results_dir", "db_path")
    @classmethod
    def _absolute(cls, path: Path | None) -> Path | None:
        # Children run in other working directories: every path handed to them must be absolute.
        return None if path is None else Path(path).expanduser().resolve()

    @property
    def db(self) -> Path:
        return self.db_path or self.results_dir / "harness.db"

    @property
    def cache_dir(self) -> Path:
        return self.results_dir / "cache"


ENV = {"HARNESS_RESULTS_DIR": "results_dir", "HARNESS_DB": "db_path", "HARNESS_TRIALS": "trials",
       "HARNESS_BUILD_TIMEOUT": "build_timeout_s", "HARNESS_EVAL_TIMEOUT": "eval_timeout_s",
       "HARNESS_BUILD_WORKERS": "build_workers", "HARNESS_GPUS": "gpus",
       "HARNESS_EXECUTOR": "executor", "HARNESS_RAY_ADDRESS": "ray_address", "HARNESS_MAX_SPEEDUP": "max_speedup",
       "HARNESS_COMPILE_BASELINES": "compile_baselines", "HARNESS_CONTENTION_WAIT": "contention_wait_s"}


def load_settings(**flags) -> Settings:
    """Defaults, overridden by HARNESS_* variables, overridden by flags that are not None."""
    values: dict = {field: os.environ[var] for var, field in ENV.items() if os.environ.get(var)}
    timing = {k: v for k, v in flags.pop("timing", {}).items() if v is not None}
    values.update({k: v for k, v in flags.items() if v is not None})
    if timing:
        values["timing"] = TimingSettings(**timing)
    return Settings(**values)
