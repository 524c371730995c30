"""Settings, in layers: built-in defaults < a TOML file (./harness.toml or --config FILE) < environment
(HARNESS_*) < command-line flags. Every setting has one name in each layer: its field name in the file
(`trials = 3`, `[timing] budget_s = 2`), a HARNESS_* variable (ENV) and, for most, a flag (FLAGS)."""

from __future__ import annotations

import difflib
import os
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from harness.checks import CheckSpec, check_spec
from harness.errors import InputError
from harness.types import Frozen, TimingSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser as the tomli package, if installed
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

CONFIG_FILE = "harness.toml"  # read from the working directory when no --config FILE is given


class SettingsError(InputError, ValueError):
    """A bad setting: unknown, of the wrong type or out of range, or an unreadable config file. The message
    names the setting and where it came from; the CLI reports it with exit status 2."""


# What the flag and the variable take: the short names, and torch's.
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
DTYPE_CHOICES = ("fp32", "fp16", "bf16", "float32", "float16", "bfloat16")  # --dtype's


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
    build_acceleration: bool = Field(default=True, description="Precompiled headers and nvcc's front ends side by "
                                     "side (harness/fastbuild); off: every build is torch's own load_inline")
    executor: Literal["local", "ray"] = Field(default="local", description="local: this machine's CPUs and GPUs; "
                                              "ray: tasks on a Ray cluster (pip install 'kernel-harness[ray]')")
    ray_address: str | None = Field(default=None, description="Ray cluster to join (default: $RAY_ADDRESS, else a "
                                                              "local one)")
    gpus: int = Field(default=0, ge=0, description="Evaluate on at most this many GPUs at once (0: every visible GPU "
                                                   "of the first one's model)")
    gpu_slots: int = Field(default=1, ge=1, le=8, description="Evaluations one GPU is handed at once: their checks "
                           "share it, each one's timing has it alone; more than one only where each one's memory is "
                           "known and they fit, and other processes' work can be told apart (local executor)")
    dtype: Literal["float32", "float16", "bfloat16"] = Field(
        default="float32", description="Floating inputs and parameters are cast to this (fp32, fp16 or bf16)")
    check: Literal["truth", "allclose", "kernelbench", "kernelbench-v0"] = Field(
        default="truth", description="What decides correctness: truth (against the reference in float64, within "
        "the dtype's tolerance and the reference's own error), allclose (against the reference, |out - ref| <= atol "
        "+ rtol |ref|), or another harness's allclose (kernelbench: fp32 1e-4, half 1e-2; kernelbench-v0: 1e-2)")
    atol: float | None = Field(default=None, ge=0, description="Absolute tolerance of the check (None: the dtype's "
                                                               "or the problem's, or the preset's)")
    rtol: float | None = Field(default=None, ge=0, description="Relative tolerance of the check (None: the dtype's "
                                                               "or the problem's, or the preset's)")
    timing: TimingSettings = Field(default_factory=TimingSettings, description="Adaptive timing settings")
    force: bool = Field(default=False, description="Build and evaluate again from scratch, even if the store and "
                                                   "the build cache have the result")
    rebuild: bool | None = Field(default=None, description="Build again even if built before (None: as force; "
                                                           "harness bench re-evaluates built candidates)")
    max_speedup: float = Field(default=10.0, gt=1, description="A speedup over eager above this is flagged "
                                                               "implausible_speedup and not counted")
    min_coverage: float = Field(default=0.5, ge=0, le=1, description="A correct result whose own kernels did less "
                                "than this share of its profiled forward's work is flagged low_coverage and not "
                                "counted (a problem's MIN_COVERAGE replaces it)")
    compile_baselines: bool = Field(default=False, description="Also measure the torch.compile baselines of the "
                                                               "problems evaluated (cached; `harness baseline` "
                                                               "measures them on their own)")
    contention_wait_s: float = Field(default=30.0, ge=0, description="On a GPU, wait at most this long for other "
                                     "processes' work on it to stop before timing; if it goes on, or shows during "
                                     "the evaluation, the result is flagged contended and not counted")
    sandbox: Literal["on", "off"] = Field(default="on", description="on: every build and evaluation child runs "
                                          "in a sandbox (harness/sandbox.py: a read-only file tree but for its own "
                                          "scratch directory, no network, its own process tree); off: without one, "
                                          "and its results are flagged unsandboxed")
    cache_max_gb: float = Field(default=20.0, gt=0, description="Cap on the build cache and the precompiled "
                                "headers together (GB): after each batch, the least recently used entries go "
                                "(none used in the last hour); `harness cache` shows and prunes them")
    sanitize: Literal["memcheck", "racecheck"] | None = Field(
        default=None, description="Run NVIDIA's compute-sanitizer (this tool) over one checked call of every candidate "
        "whose outputs were judged; an error it finds makes the verdict runtime_error (cuda target; eval/sanitize.py)")
    counters: bool = Field(default=False, description="Read NVIDIA Nsight Compute's counters over one checked call "
                           "of every candidate whose outputs were judged (set by the agents' profile tool; cuda "
                           "target with ncu; eval/counters.py); they never change a verdict")
    static_rules: bool = Field(default=True, description="Apply the static integrity rules; off only to test "
                                                         "the runtime defenses on their own")
    problems_dir: Path | None = Field(default=None, description="Problem root (None: the problem set shipped "
                                                                "with the harness, else ./problems)")
    solutions_dir: Path = Field(default=Path("solutions"), validate_default=True,
                                description="Where generated candidates are written, as "
                                            "<solutions_dir>/<run>/<problem id>/sampleS_turnT.py")

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value):
        return DTYPE_ALIASES.get(value, value) if isinstance(value, str) else value

    @field_validator("results_dir", "db_path", "problems_dir", "solutions_dir")
    @classmethod
    def _absolute(cls, path: Path | None) -> Path | None:
        # Children run in other working directories: every path handed to them must be absolute.
        return None if path is None else Path(path).expanduser().resolve()

    @property
    def db(self) -> Path:
        return self.db_path or self.results_dir / "harness.db"

    @property
    def check_spec(self) -> CheckSpec:
        """The check with its tolerances resolved for this dtype (a problem's own still apply where none is set)."""
        return check_spec(self.check, self.dtype, self.atol, self.rtol)

    @property
    def cache_dir(self) -> Path:
        return self.results_dir / "cache"


# HARNESS_* variable -> setting ("timing.budget_s" for a timing field). Every setting but INTERNAL has one.
ENV = {"HARNESS_RESULTS_DIR": "results_dir", "HARNESS_DB": "db_path", "HARNESS_TRIALS": "trials",
       "HARNESS_BUILD_TIMEOUT": "build_timeout_s", "HARNESS_EVAL_TIMEOUT": "eval_timeout_s",
       "HARNESS_BUILD_WORKERS": "build_workers", "HARNESS_MAX_JOBS": "max_jobs",
       "HARNESS_BUILD_ACCELERATION": "build_acceleration", "HARNESS_GPUS": "gpus", "HARNESS_GPU_SLOTS": "gpu_slots",
       "HARNESS_EXECUTOR": "executor", "HARNESS_RAY_ADDRESS": "ray_address", "HARNESS_DTYPE": "dtype",
       "HARNESS_TIMING_WARMUP_RUNS": "timing.warmup_runs", "HARNESS_TIMING_MIN_RUNS": "timing.min_runs",
       "HARNESS_TIMING_MAX_RUNS": "timing.max_runs", "HARNESS_TIMING_TARGET_RSE": "timing.target_rse",
       "HARNESS_TIMING_BUDGET": "timing.budget_s", "HARNESS_FORCE": "force", "HARNESS_REBUILD": "rebuild",
       "HARNESS_MAX_SPEEDUP": "max_speedup", "HARNESS_MIN_COVERAGE": "min_coverage",
       "HARNESS_COMPILE_BASELINES": "compile_baselines",
       "HARNESS_CONTENTION_WAIT": "contention_wait_s", "HARNESS_PROBLEMS_DIR": "problems_dir",
       "HARNESS_SOLUTIONS_DIR": "solutions_dir", "HARNESS_SANDBOX": "sandbox",
       "HARNESS_CACHE_MAX_GB": "cache_max_gb", "HARNESS_CHECK": "check", "HARNESS_ATOL": "atol",
       "HARNESS_RTOL": "rtol", "HARNESS_SANITIZE": "sanitize"}
# Setting -> its command-line flag, where it has one (the commands that take it: README, `harness CMD --help`).
FLAGS = {"results_dir": "--results-dir", "db_path": "--db", "trials": "--trials", "build_timeout_s": "--build-timeout",
         "eval_timeout_s": "--eval-timeout", "build_workers": "--build-workers",
         "build_acceleration": "--build-acceleration", "gpus": "--gpus", "gpu_slots": "--gpu-slots",
         "executor": "--executor", "ray_address": "--ray-address", "timing.budget_s": "--timing-budget",
         "force": "--force", "max_speedup": "--max-speedup", "min_coverage": "--min-coverage",
         "compile_baselines": "--compile-baselines",
         "contention_wait_s": "--contention-wait", "problems_dir": "--problems-dir",
         "solutions_dir": "--solutions-dir", "sandbox": "--sandbox", "dtype": "--dtype", "check": "--check",
         "atol": "--atol", "rtol": "--rtol", "sanitize": "--sanitize"}
# Settable only by code (load_settings(static_rules=False), Settings(...)): switching the integrity rules off is
# for testing the runtime defenses, never something a config file or a stray variable should do; the counters are
# what the agents' profile tool asks for where ncu is found (agent/toolbox.py).
INTERNAL = frozenset({"static_rules", "counters"})


def _names() -> list[str]:
    names = []
    for name in Settings.model_fields:
        names += [f"timing.{sub}" for sub in TimingSettings.model_fields] if name == "timing" else [name]
    return names


SETTINGS: tuple[str, ...] = tuple(_names())  # every setting, in the model's order; timing's as timing.<field>
CONFIGURABLE: tuple[str, ...] = tuple(s for s in SETTINGS if s not in INTERNAL)  # keys of the file and of ENV


def _field(setting: str):
    if setting.startswith("timing."):
        return TimingSettings.model_fields[setting.removeprefix("timing.")]
    return Settings.model_fields[setting]


PATHS = frozenset(s for s in SETTINGS if _field(s).annotation is Path or Path in typing.get_args(_field(s).annotation))


@dataclass(frozen=True)
class SettingSource:
    """One setting's effective value and the layer it came from."""

    setting: str        # field name; timing's as timing.budget_s
    value: Any          # as validated: paths absolute, numbers parsed
    source: str         # "default", "config file PATH", "env HARNESS_X", "flag --x" or "argument NAME" (no flag)
    description: str
    env: str | None     # its HARNESS_* variable (None: INTERNAL)
    flag: str | None    # its command-line flag, if any


def find_config_file(config_file: Path | str | None = None) -> Path | None:
    """The file given (it must exist), else ./harness.toml if there is one, else None."""
    if config_file is not None:
        path = Path(config_file).expanduser()
        if not path.is_file():
            raise SettingsError(f"config file {path} not found" if not path.exists()
                                else f"config file {path} is not a file")
        return path
    path = Path(CONFIG_FILE)
    return path if path.is_file() else None


def _unknown(key: str, where: str, known: tuple[str, ...] = CONFIGURABLE) -> SettingsError:
    if key in INTERNAL and key not in known:
        return SettingsError(f'setting "{key}" in {where}: it can be set only by code, e.g. load_settings({key}=...)')
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return SettingsError(f'unknown setting "{key}" in {where}{hint} (known: {", ".join(known)})')


def _read_file(path: Path) -> dict[str, Any]:
    """The file's settings as {setting: value}, relative paths made relative to the file's directory."""
    where = str(path)
    if tomllib is None:
        raise SettingsError(f"reading the config file {where} needs Python 3.11 or later, or `pip install tomli`")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{where}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read config file {where}: {exc}") from None
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if key == "timing":
            if not isinstance(value, dict):
                raise SettingsError(f"timing in {where} must be a table: a line [timing], then budget_s = 2 "
                                    f"and the like; got {value!r}")
            flat.update({f"timing.{sub}": v for sub, v in value.items()})
        else:
            flat[key] = value
    base = path.resolve().parent
    for key, value in flat.items():
        if key not in CONFIGURABLE:
            raise _unknown(key, where)
        if key in PATHS and isinstance(value, str):
            flat[key] = base / Path(value).expanduser()  # an absolute path stays as it is
    return flat


def _layers(config_file: Path | str | None, flags: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """{setting: (raw value, source)} for every setting some layer gives, the highest layer winning."""
    given: dict[str, tuple[Any, str]] = {}
    path = find_config_file(config_file)
    if path is not None:
        given.update({k: (v, f"config file {path}") for k, v in _read_file(path).items()})
    for var, setting in ENV.items():
        if os.environ.get(var):  # set but empty counts as not set
            given[setting] = (os.environ[var], f"env {var}")
    timing = flags.pop("timing", None) or {}
    if isinstance(timing, TimingSettings):
        timing = timing.model_dump(exclude_unset=True)
    flags.update({f"timing.{k}": v for k, v in timing.items()})
    for key, value in flags.items():
        if value is None:  # not given
            continue
        if key not in SETTINGS:
            raise _unknown(key, "the arguments of load_settings", SETTINGS)
        given[key] = (value, f"flag {FLAGS[key]}" if key in FLAGS else f"argument {key}")
    return given


def _build(given: dict[str, tuple[Any, str]]) -> Settings:
    values: dict[str, Any] = {}
    for setting, (value, _) in given.items():
        if setting.startswith("timing."):
            values.setdefault("timing", {})[setting.removeprefix("timing.")] = value
        else:
            values[setting] = value
    try:
        return Settings(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            setting = ".".join(loc[:2]) if loc[:1] == ["timing"] else (loc[0] if loc else "settings")
            source = given.get(setting, (None, "default"))[1]
            got = f", got {error['input']!r}" if setting in given else ""
            problems.append(f"bad setting {setting} ({source}): {error['msg']}{got}")
        raise SettingsError("; ".join(problems)) from exc


def load_settings_with_sources(config_file: Path | str | None = None,
                               **flags) -> tuple[Settings, list[SettingSource]]:
    """load_settings, and for every setting its effective value and the layer it came from."""
    given = _layers(config_file, dict(flags))
    settings = _build(given)
    sources = []
    for setting in SETTINGS:
        value: Any = settings
        for part in setting.split("."):
            value = getattr(value, part)
        env = next((var for var, s in ENV.items() if s == setting), None)
        sources.append(SettingSource(setting, value, given[setting][1] if setting in given else "default",
                                     _field(setting).description or "", env, FLAGS.get(setting)))
    return settings, sources


def explain_settings(config_file: Path | str | None = None, **flags) -> list[SettingSource]:
    """Every setting's effective value and where it came from (what `harness config show` prints)."""
    return load_settings_with_sources(config_file, **flags)[1]


def store_settings(config_file: Path | str | None = None, **flags) -> Settings:
    """Settings for a command that only reads or prunes what is stored: results_dir, db_path and cache_max_gb
    from their layers, every other setting its default, so that a bad unrelated value (HARNESS_TRIALS=abc)
    breaks only the commands that use it."""
    given = _layers(config_file, dict(flags))
    return _build({k: v for k, v in given.items() if k in ("results_dir", "db_path", "cache_max_gb")})


def load_settings(config_file: Path | str | None = None, **flags) -> Settings:
    """Defaults < the TOML file (config_file, which must exist, else ./harness.toml if present) < HARNESS_*
    variables < flags. A flag of None is not given; timing's as timing={"budget_s": ...}. Raises SettingsError."""
    return _build(_layers(config_file, dict(flags)))
