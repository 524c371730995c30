"""The caches' cap: least recently used entries go first, entries in use or locked by a build never do."""
import fcntl
import os
import time

from harness.eval.cache import IN_USE_S, entries, prune
from harness.fastbuild.names import PCH_DIR_ENV
from tests.conftest import json_lines, run_cli


def entry(root, name, size, age_s):
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "blob").write_bytes(b"x" * size)
    then = time.time() - age_s
    os.utime(directory, (then, then))
    return directory


def caches(tmp_path, monkeypatch):
    monkeypatch.setenv(PCH_DIR_ENV, str(tmp_path / "pch"))
    builds = tmp_path / "results" / "cache" / "builds"
    made = {"a": entry(builds, "a", 100, 3 * IN_USE_S), "p": entry(tmp_path / "pch", "p", 1000, 2.5 * IN_USE_S),
            "b": entry(builds, "b", 200, 2 * IN_USE_S), "c": entry(builds, "c", 300, IN_USE_S / 6)}
    return tmp_path / "results" / "cache", made


def test_the_least_recently_used_go_first_until_the_caches_fit(tmp_path, monkeypatch):
    cache_dir, made = caches(tmp_path, monkeypatch)
    assert [(e.kind, e.path.name, e.bytes) for e in entries(cache_dir)] == \
        [("build", "a", 100), ("pch", "p", 1000), ("build", "b", 200), ("build", "c", 300)]
    removed = prune(cache_dir, max_bytes=700)
    assert [e.path.name for e in removed] == ["a", "p"] and not made["a"].exists() and not made["p"].exists()
    assert made["b"].exists() and made["c"].exists()
    assert prune(cache_dir, max_bytes=1000) == []  # fits already


def test_entries_in_use_or_locked_by_a_build_stay_even_above_the_cap(tmp_path, monkeypatch):
    cache_dir, made = caches(tmp_path, monkeypatch)
    with open(made["b"] / ".harness-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a build in progress
        removed = prune(cache_dir, max_bytes=0)
    assert [e.path.name for e in removed] == ["a", "p"]
    assert made["b"].exists() and made["c"].exists()  # locked; used ten minutes ago
    then = time.time() - 2 * IN_USE_S
    os.utime(made["b"], (then, then))  # (the lock file's creation touched it)
    assert [e.path.name for e in prune(cache_dir, max_bytes=0)] == ["b"] and made["c"].exists()


def test_the_cache_command_shows_and_prunes(tmp_path, monkeypatch):
    cache_dir, made = caches(tmp_path, monkeypatch)
    env = {PCH_DIR_ENV: str(tmp_path / "pch")}
    proc = run_cli("cache", "--json", "--results-dir", tmp_path / "results", env=env)
    assert proc.returncode == 0, proc.stderr
    shown = {c["cache"]: c for c in json_lines(proc.stdout)}  # a line a cache
    assert list(shown) == ["build", "triton", "pch"]
    assert shown["build"]["entries"] == 3 and shown["pch"]["bytes"] == 1000
    proc = run_cli("cache", "prune", "--max-gb", "0", "--json", "--results-dir", tmp_path / "results", env=env)
    pruned = {c["cache"]: c for c in json_lines(proc.stdout)}
    assert pruned["build"]["removed"]["entries"] == 2 and pruned["pch"]["removed"]["entries"] == 1
    assert pruned["build"]["entries"] == 1 and made["c"].exists()
    text = run_cli("cache", "--results-dir", tmp_path / "results", env=env).stdout
    assert "precompiled headers" in text and "cache_max_gb" in text


def test_a_candidates_triton_kernels_are_under_the_cap_and_shown(tmp_path, monkeypatch):
    cache_dir, made = caches(tmp_path, monkeypatch)
    kernels = entry(cache_dir / "triton", "k", 50, 4 * IN_USE_S)
    assert [(e.kind, e.path.name) for e in entries(cache_dir)][0] == ("triton", "k")
    proc = run_cli("cache", "prune", "--max-gb", "0", "--json", "--results-dir", tmp_path / "results",
                   env={PCH_DIR_ENV: str(tmp_path / "pch")})
    triton = next(c for c in json_lines(proc.stdout) if c["cache"] == "triton")
    assert triton["removed"] == {"entries": 1, "bytes": 50, "dirs": [str(cache_dir / "triton")]}
    assert not kernels.exists()
    assert "Triton kernels" in run_cli("cache", "--results-dir", tmp_path / "results").stdout
