import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.eval.machine import MEASUREMENTS_ENV
from harness.types import EvalResult

if os.environ.get("PYTEST_XDIST_WORKER"):
    # execnet gives its workers COLUMNS=80 and LINES=24, which a plain pytest run does not have: without them the
    # harness prints tables piped to a file at their full width, and the tests read them so
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

FIXTURES = Path(__file__).parent / "fixtures"
SOLUTIONS = FIXTURES / "solutions"
REPO = Path(__file__).parent.parent

# An honest cpu ReLU for tests about something other than how an answer builds: pybind11 only, no torch header
# (~3 s to build, where a torch-header one takes 20-40 s here). It passes the static rules.
LEAN_KERNEL = r'''
#include <pybind11/pybind11.h>
#include <cstdint>
void relu(std::uintptr_t x, std::uintptr_t out, std::int64_t n) {
    const float* a = reinterpret_cast<const float*>(x);
    float* o = reinterpret_cast<float*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu", &relu); }
'''
LEAN_RELU = f'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{LEAN_KERNEL}"""
ext = load_inline(name="lean_relu", cpp_sources=CPP, no_implicit_headers=True)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        ext.relu(x.data_ptr(), out.data_ptr(), x.numel())
        return out
'''


def eval_result(**stages) -> EvalResult:
    """A correct result on a GPU with these stages, for arithmetic on results (bench figures, scheduling)."""
    return EvalResult(problem_id="p", problem_sha256="a", candidate_path=None, candidate_sha256="b", target="cuda",
                      device_name="d", torch_version="t", status="correct", stages=stages)


def run_cli(*args: str, env: dict | None = None, timeout: float = 1800,
            cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The real `harness` command of this checkout, in a child process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_dir(tmp_path_factory) -> Path:
    """The temporary directory of this whole run (pytest-N), both workers' (pytest-N/popen-gwK) included."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def machine_measurements(tmp_path_factory):
    """One machine store (harness/eval/machine.py) for the run, both workers included: the device's peaks and the
    problems' baselines are measured once, not once per results directory (~15 s each). Tests of measuring itself
    set their own (or "off")."""
    os.environ.setdefault(MEASUREMENTS_ENV, str(run_dir(tmp_path_factory) / "measurements.db"))


@pytest.fixture(scope="module")
def measured_here():
    """No machine store for a module (`pytestmark = pytest.mark.usefixtures("measured_here")`) whose subject is
    measuring: each results directory measures its own peaks and baselines."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MEASUREMENTS_ENV, "off")
        yield


@pytest.fixture
def own_machine_store(tmp_path, monkeypatch) -> Path:
    """A machine store of the test's own (tmp_path/machine.db), which nothing fills unless the test does."""
    monkeypatch.setenv(MEASUREMENTS_ENV, str(tmp_path / "machine.db"))
    return tmp_path / "machine.db"


def share_builds(results_dir: Path, tmp_path_factory) -> Path:
    """`results_dir` with its build cache (RESULTS_DIR/cache/builds) linked to one the whole run shares: a build is
    kept under its key (source, flags, torch, device), so a candidate several modules evaluate is compiled once
    (~40 s here), and two workers asking for one build get it built once (a lock per build directory). Only for
    modules that neither look into nor change build directories, and whose candidates write nothing there."""
    shared = run_dir(tmp_path_factory) / "builds"
    shared.mkdir(exist_ok=True)
    cache = Path(results_dir) / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "builds").symlink_to(shared, target_is_directory=True)
    return Path(results_dir)


@pytest.fixture
def cli():
    return run_cli


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """GPU tests run one at a time (they time things on one device): `-m gpu` turns the two workers off."""
    if "gpu" in (config.option.markexpr or "") and getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0
        config.option.dist = "no"
    # Files go to the workers in the order pytest_collection_modifyitems leaves them (xdist would put those with
    # the most tests first, whatever they cost).
    config.option.loadscopereorder = False


# The slowest files first (measured on the 2-core CI machine, a full run: ~1900 s for test_shapes down to ~150 s):
# given last, a 20-minute file would leave the other worker idle for most of it. The others follow as collected.
SLOWEST_FIRST = ("test_shapes", "test_run_cpu", "test_corpus_cpu", "test_kernel_use_cpu", "test_eval_cpu",
                 "test_dtype_cpu", "test_loop_cpu", "test_feedback_loop_cpu", "test_pch", "test_audit_cpu",
                 "test_judge_cpu", "test_mcp_cpu", "test_tools_cpu", "test_run_cpu_loaded", "test_escapes_cpu",
                 "test_ray_cpu", "test_baseline_cpu", "test_prompt_example_cpu", "test_loop_triton_cpu", "test_wheel",
                 "test_rl_cpu", "test_report_html")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: a file's tests keep their order
