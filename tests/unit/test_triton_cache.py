"""A candidate's Triton cache (harness/eval/triton_cache.py): what its evaluation compiled is kept for its next
evaluation, sealed, without links, and never for another candidate."""
import os

import pytest

from harness.eval import triton_cache
from harness.eval.cache import entries

KEY = "a" * 64
OTHER = "b" * 64


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_KEY_FILE", str(tmp_path / "key"))


def compiled(work, files: dict[str, bytes]):
    """What an evaluation child leaves in its TRITON_CACHE_DIR."""
    for name, data in files.items():
        path = triton_cache.child_cache(work) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def staged(work) -> dict[str, bytes]:
    root = triton_cache.child_cache(work)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_what_an_evaluation_compiled_is_staged_for_the_same_candidate_only(tmp_path):
    cache = tmp_path / "cache"
    compiled(tmp_path / "eval1", {"HASH1/relu.cubin": b"\x7fELF", "HASH1/relu.json": b"{}"})
    triton_cache.keep(cache, KEY, tmp_path / "eval1")
    triton_cache.stage_in(cache, KEY, tmp_path / "eval2")
    assert staged(tmp_path / "eval2") == {"HASH1/relu.cubin": b"\x7fELF", "HASH1/relu.json": b"{}"}
    triton_cache.stage_in(cache, OTHER, tmp_path / "eval3")
    assert staged(tmp_path / "eval3") == {}
    assert [e.path for e in entries(cache) if e.kind == "triton"] == [triton_cache.directory(cache, KEY)]  # capped


def test_links_and_oversized_caches_are_not_kept(tmp_path, monkeypatch):
    cache, work = tmp_path / "cache", tmp_path / "eval"
    secret = tmp_path / "secret"
    secret.write_text("not the candidate's")
    compiled(work, {"HASH/k.cubin": b"ok"})
    os.symlink(secret, triton_cache.child_cache(work) / "HASH" / "k.json")
    os.symlink(tmp_path, triton_cache.child_cache(work) / "everything")
    triton_cache.keep(cache, KEY, work)
    triton_cache.stage_in(cache, KEY, tmp_path / "next")
    assert staged(tmp_path / "next") == {"HASH/k.cubin": b"ok"}

    monkeypatch.setattr(triton_cache, "LIMIT_BYTES", 10)
    compiled(work, {"HASH/big.cubin": b"x" * 11})
    triton_cache.keep(cache, KEY, work)  # too big: the copy kept before stays
    triton_cache.stage_in(cache, KEY, tmp_path / "after")
    assert staged(tmp_path / "after") == {"HASH/k.cubin": b"ok"}


def test_a_cache_changed_after_it_was_kept_is_dropped_and_a_rebuild_forgets_it(tmp_path):
    cache = tmp_path / "cache"
    compiled(tmp_path / "eval", {"HASH/k.cubin": b"ok"})
    triton_cache.keep(cache, KEY, tmp_path / "eval")
    (triton_cache.directory(cache, KEY) / "HASH" / "k.cubin").write_bytes(b"planted")
    triton_cache.stage_in(cache, KEY, tmp_path / "next")
    assert staged(tmp_path / "next") == {} and not triton_cache.directory(cache, KEY).exists()

    triton_cache.keep(cache, KEY, tmp_path / "eval")
    triton_cache.forget(cache, KEY)
    triton_cache.stage_in(cache, KEY, tmp_path / "again")
    assert staged(tmp_path / "again") == {}


def test_staging_never_writes_over_a_file_the_runner_made_while_it_started(tmp_path):
    """The runner made Triton's driver module in its cache while it started (warm_driver) and has it loaded: the
    candidate's kept copy of it is not written over it (a loaded library rewritten in place can crash its process)."""
    cache = tmp_path / "cache"
    compiled(tmp_path / "eval", {"DRIVER/cuda_utils.so": b"kept", "HASH/k.cubin": b"ok"})
    triton_cache.keep(cache, KEY, tmp_path / "eval")
    compiled(tmp_path / "next", {"DRIVER/cuda_utils.so": b"loaded"})
    loaded = triton_cache.child_cache(tmp_path / "next") / "DRIVER" / "cuda_utils.so"
    before = loaded.stat().st_ino
    triton_cache.stage_in(cache, KEY, tmp_path / "next")
    assert staged(tmp_path / "next") == {"DRIVER/cuda_utils.so": b"loaded", "HASH/k.cubin": b"ok"}
    assert loaded.stat().st_ino == before
