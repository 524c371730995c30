"""Baselines: the reference's own time, measured in a clean child process (one no candidate has
touched), with the problem's bytes and FLOPs, cached in the store per (problem, device, torch
version, dtype, protocol).

An evaluation compares the reference's time beside the candidate with this one: a candidate that
slows the reference down (to look faster) shows up as `reference_slowed`.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from pathlib import Path

from .build import torch_version
from .config import Settings
from .executor import eval_env
from .isolation import run_child
from .store import BaselineKey, Store
from .types import PROTOCOL_VERSION, Baseline, BaselineReport, BaselineSpec, DeviceInfo, Problem

CHILD_SLACK_S = 120.0  # start-up and input generation, beyond the timing budget of each problem


def baseline_key(problem: Problem, device: DeviceInfo, settings: Settings, kind: str = "eager") -> BaselineKey:
    return (problem.sha256, device.name, device.target, torch_version(), settings.dtype, PROTOCOL_VERSION, kind)


def eager_baselines(problems: list[Problem], device: DeviceInfo, settings: Settings,
                    store: Store) -> dict[str, Baseline]:
    """Problem sha256 -> the reference's clean baseline; measured (all missing ones in one child) if not stored.

    A problem whose reference cannot be measured is left out: its evaluations say why.
    """
    unique = list({p.sha256: p for p in problems}.values())
    found = {p.sha256: b for p in unique if (b := store.baseline(baseline_key(p, device, settings)))}
    missing = [p for p in unique if p.sha256 not in found]
    if not missing:
        return found
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="baseline-", dir=settings.cache_dir))
    try:
        spec = BaselineSpec(problem_paths=tuple(p.path for p in missing), target=device.target, dtype=settings.dtype,
                            seed=secrets.randbits(63), timing=settings.timing, result_path=str(work / "result.json"))
        (work / "spec.json").write_text(spec.model_dump_json())
        timeout = len(missing) * (settings.timing.budget_s + CHILD_SLACK_S)
        run_child(["baseline", str(work / "spec.json")], env=eval_env(device, settings), timeout_s=timeout,
                  log_path=work / "baseline.log", cwd=work)
        result = work / "result.json"
        reports = [BaselineReport.model_validate(r) for r in json.loads(result.read_text())] if result.is_file() else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    by_path = {p.path: p for p in missing}
    for report in reports:
        if report.baseline is not None and report.problem_path in by_path:
            problem = by_path[report.problem_path]
            store.add_baseline(baseline_key(problem, device, settings), report.baseline)
            found[problem.sha256] = report.baseline
    return found
