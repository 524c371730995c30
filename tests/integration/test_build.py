"""Builds: hash-keyed directories, one build per source across processes, timeouts."""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from harness.device import discover
from harness.eval.build import BuildOptions, build
from harness.eval.candidate import load_candidate
from harness.eval.confine import Confinement
from harness.types import DeviceInfo
from tests.conftest import LEAN_RELU, REPO, SOLUTIONS

BUILD_IN_CHILD = """
import sys
from pathlib import Path
from harness.eval.build import BuildOptions, build
from harness.device import discover
from harness.eval.candidate import load_candidate
result = build(load_candidate(sys.argv[1]), discover("cpu"), Path(sys.argv[2]), BuildOptions(timeout_s=900))
print(result.model_dump_json())
"""


def test_concurrent_processes_build_one_source_once(tmp_path):
    candidate = tmp_path / "relu_variant.py"
    candidate.write_text(LEAN_RELU + "\n# variant: only for the concurrency test\n")
    procs = [subprocess.Popen([sys.executable, "-c", BUILD_IN_CHILD, str(candidate), str(tmp_path / "cache")],
                              stdout=subprocess.PIPE, text=True, cwd=REPO) for _ in range(2)]
    results = [json.loads(p.communicate(timeout=900)[0]) for p in procs]
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert sorted(r["cached"] for r in results) == [False, True]
    assert results[0]["directory"] == results[1]["directory"]
    assert len(list((tmp_path / "cache" / "builds").iterdir())) == 1


def test_build_timeout_kills_the_builder_and_is_not_cached(tmp_path):
    candidate = load_candidate(str(SOLUTIONS / "crash" / "slow_import.py"))
    result = build(candidate, discover("cpu"), tmp_path, BuildOptions(timeout_s=8))
    assert result.status == "timeout"
    assert "--build-timeout" in result.error
    again = build(candidate, discover("cpu"), tmp_path, BuildOptions(timeout_s=8))
    assert again.cached is False  # a timeout is retried, not served from the cache


def test_a_cached_build_changed_since_it_was_built_is_built_again(tmp_path, caplog):
    """A finished build is served only while its files are the ones the harness sealed (seal.py)."""
    (tmp_path / "relu.py").write_text(LEAN_RELU)
    candidate = load_candidate(str(tmp_path / "relu.py"))
    first = build(candidate, discover("cpu"), tmp_path, BuildOptions(timeout_s=900))
    assert first.status == "ok" and build(candidate, discover("cpu"), tmp_path, BuildOptions(timeout_s=900)).cached
    directory = Path(first.directory)
    [library] = directory.rglob("*.so")
    planted = library.read_bytes() + b"planted"  # another extension under this source's hash
    library.write_bytes(planted)
    with caplog.at_level(logging.WARNING):
        again = build(candidate, discover("cpu"), tmp_path, BuildOptions(timeout_s=900))
    assert again.status == "ok" and not again.cached and "fails its seal check" in caplog.text
    assert library.read_bytes() != planted and build(candidate, discover("cpu"), tmp_path).cached


# Each probe names load_inline: a source that builds nothing has no build child (eval/build.py)
POLICY_PROBE = """import os
import torch
from torch.utils.cpp_extension import load_inline
print("idle policy at import:", os.sched_getscheduler(0) == os.SCHED_IDLE)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def test_builds_beside_gpu_evaluations_yield_the_cores(tmp_path):
    """On a GPU, builds run beside evaluations: the build child (and the compilers it starts) runs only where nothing
    else wants a core (SCHED_IDLE); on the cpu target, where evaluations wait for every build, it keeps the parent's
    policy, as does a build the GPU waits for with nothing else to do (yield_cores=False: the first for a device)."""
    (tmp_path / "probe.py").write_text(POLICY_PROBE)
    candidate = load_candidate(str(tmp_path / "probe.py"))
    gpu = DeviceInfo(target="cuda", name="a GPU this machine need not have", index=0)
    ours = os.sched_getscheduler(0) == os.SCHED_IDLE
    for device, yield_cores, idle in ((gpu, True, True), (gpu, False, ours), (discover("cpu"), True, ours)):
        result = build(candidate, device, tmp_path / f"{device.target}-{yield_cores}", BuildOptions(timeout_s=600),
                       yield_cores=yield_cores)
        assert result.status == "ok", result.log
        assert f"idle policy at import: {idle}" in result.log


ESCAPE_PROBE = """import os
import torch
from torch.utils.cpp_extension import load_inline
for what, attempt in (("a higher priority", lambda: os.setpriority(os.PRIO_PROCESS, 0, -5)),
                      ("the normal policy", lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)))):
    try:
        attempt()
        print("took", what)
    except OSError:
        print("refused", what)
print("idle policy after:", os.sched_getscheduler(0) == os.SCHED_IDLE)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def test_a_sandboxed_build_cannot_take_the_cores_back(tmp_path):
    """The idle policy is the build's to keep: in the sandbox (no capabilities) a candidate's code run at build time
    can neither leave it nor raise its priority, so it cannot crowd the evaluations beside it."""
    (tmp_path / "probe.py").write_text(ESCAPE_PROBE)
    gpu = DeviceInfo(target="cuda", name="a GPU this machine need not have", index=0)
    sandboxed = BuildOptions(timeout_s=600, confinement=Confinement(hidden=()))
    result = build(load_candidate(str(tmp_path / "probe.py")), gpu, tmp_path, sandboxed)
    assert result.status == "ok", result.log
    for line in ("refused a higher priority", "refused the normal policy", "idle policy after: True"):
        assert line in result.log, result.log


def test_a_build_log_has_no_numpy_warning_where_numpy_cannot_be_imported(tmp_path, monkeypatch):
    """torch warns "Failed to initialize NumPy" at import where numpy is missing (a CPU wheel does not bring it) or
    built for another ABI: the build child, which imports torch to build, silences that warning alone."""
    missing = tmp_path / "no-numpy" / "numpy"
    missing.mkdir(parents=True)
    (missing / "__init__.py").write_text('raise ModuleNotFoundError("No module named numpy", name="numpy")\n')
    monkeypatch.setenv("PYTHONPATH", str(missing.parent))  # children get it, behind the harness's own
    plain = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True, check=True)
    assert "Failed to initialize NumPy" in plain.stderr  # what torch says here, unsilenced
    candidate = tmp_path / "relu.py"
    candidate.write_text(LEAN_RELU)
    options = BuildOptions(timeout_s=600, confinement=Confinement(hidden=()))
    result = build(load_candidate(str(candidate)), discover("cpu"), tmp_path / "cache", options)
    assert result.status == "ok", result.log[-3000:]
    assert "NumPy" not in result.log and "UserWarning" not in result.log, result.log[:3000]
    assert result.log.startswith("harness: the candidate's code starts here"), result.log[:3000]
