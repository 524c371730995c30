"""Triton in the runner (harness/child/triton_jit.py): its driver made while the runner starts, where there is one."""
import os
import subprocess
import sys
import time

import pytest

from harness.device import visible_gpus
from tests.conftest import REPO

WARM = "from harness.child.triton_jit import warm_driver; print(warm_driver())"


def test_tritons_driver_is_made_ahead_where_a_gpu_driver_is_and_said_to_fail_elsewhere(tmp_path):
    """On a GPU machine the warm-up compiles Triton's C helpers into the process's Triton cache and says how long it
    took; without a GPU driver it fails, and says so (None), leaving the failure to the candidate's own launch."""
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache"), "TRITON_HOME": str(tmp_path)}
    env.pop("TRITON_INTERPRET", None)
    said = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True, env=env, cwd=REPO,
                          check=True, timeout=300).stdout.strip()
    if visible_gpus():
        assert float(said) > 0 and any((tmp_path / "cache").rglob("cuda_utils*")), said
    else:
        assert said == "None"


def test_the_hash_of_triton_s_sources_is_made_ahead_and_kept_for_the_first_compile():
    """source_key makes the key Triton's first compile would hash its own sources for (and caches it)."""
    pytest.importorskip("triton")
    script = ("from harness.child.triton_jit import source_key; source_key(); "
              "import triton.runtime.cache as c; print(c.triton_key.cache_info().currsize)")
    said = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True,
                          timeout=300).stdout.strip()
    assert said == "1"


def test_a_compile_timed_inside_a_compile_counts_once():
    """A launcher made inside compile() (in Triton versions that do) is not compile time twice."""
    pytest.importorskip("triton")
    from harness.child.triton_jit import JitClock

    clock = JitClock(interpreted=True)
    inner = clock._timed("compile", lambda: sum(range(200_000)))
    outer = clock._timed("compile", lambda: [inner() for _ in range(3)])
    started = time.perf_counter()
    outer()
    assert 0 < clock.seconds["compile"] <= time.perf_counter() - started
