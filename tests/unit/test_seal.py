"""What the harness keeps and serves again carries its keyed digest (seal.py): stored verdicts, baselines and
peaks, build directories, precompiled headers. What was changed since, or sealed by another key, is not served."""
import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from harness import seal
from harness.fastbuild import maker as pch_maker
from harness.fastbuild.names import PCH_FILE
from harness.store import Store
from harness.types import PROTOCOL_VERSION, Baseline, Peaks, Timing
from tests.unit.test_store import result

TIMING = Timing(median_ms=2.0, mean_ms=2.1, std_ms=0.1, min_ms=1.9, n=10, rse=0.01)


@pytest.fixture(autouse=True)
def key_file(tmp_path, monkeypatch):
    path = tmp_path / "config" / "key"
    monkeypatch.setenv(seal.KEY_FILE_ENV, str(path))
    return path


def test_the_key_is_made_once_readable_by_its_owner_alone(key_file):
    digest = seal.seal("a", b"b")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_text()) == 64
    assert seal.seal("a", b"b") == digest and seal.verify(digest, "a", "b")
    assert not seal.verify(digest, "ab") and not seal.verify(digest, "a", "b", "") and not seal.verify(None, "a")
    assert seal.seal("ab", "c") != seal.seal("a", "bc")  # parts are length-prefixed


def test_file_digests_change_with_any_file_and_skip_what_is_asked(tmp_path):
    directory = tmp_path / "d"
    (directory / "sub").mkdir(parents=True)
    (directory / "a.so").write_bytes(b"\x7fELF")
    (directory / "sub" / "b.o").write_bytes(b"obj")
    (directory / "lock").write_text("")
    before = seal.file_digests(directory, skip=frozenset({"lock"}))
    assert [line.split()[0] for line in before] == ["a.so", "sub/b.o"]
    (directory / "lock").write_text("held")
    assert seal.file_digests(directory, skip=frozenset({"lock"})) == before
    (directory / "sub" / "b.o").write_bytes(b"obk")
    assert seal.file_digests(directory, skip=frozenset({"lock"})) != before


def edit(db_path, statement: str) -> None:
    db = sqlite3.connect(db_path)
    with db:
        db.execute(statement)
    db.close()


def test_a_stored_verdict_edited_in_the_file_is_not_served(tmp_path, caplog):
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(candidate="c" * 64, status="incorrect"), candidate_source="S", problem_source="P")
        store.add("r", result(candidate="d" * 64), candidate_source="S2", problem_source="P")
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", result().build_protocol)[1].status == "incorrect"
    # an edit that turns the verdict, or one that only raises the speedup, breaks the seal
    edit(tmp_path / "h.db", "UPDATE evaluations SET status = 'correct', result_json = replace(result_json, "
                            "'\"incorrect\"', '\"correct\"') WHERE candidate_sha256 LIKE 'c%'")
    edit(tmp_path / "h.db", "UPDATE evaluations SET result_json = replace(result_json, '\"speedup\":2.0', "
                            "'\"speedup\":9.0') WHERE candidate_sha256 LIKE 'd%'")
    with Store(tmp_path / "h.db") as store, caplog.at_level(logging.WARNING):
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", result().build_protocol) is None
        assert store.find("d" * 64, "p" * 64, "GPU", "cuda", result().build_protocol) is None
        assert "edited since it was written" in caplog.text
        store.add("r", result(candidate="d" * 64), candidate_source="S2", problem_source="P")  # evaluated again
        assert store.find("d" * 64, "p" * 64, "GPU", "cuda", result().build_protocol)[1].speedup == 2.0


def test_an_evaluation_whose_workload_rows_were_edited_is_not_served(tmp_path, caplog):
    from tests.unit.test_store import WORKLOADS
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(status="incorrect").model_copy(update={"workloads": WORKLOADS}), candidate_source="S",
                  problem_source="P")
    # the held-out workload's failure made a pass: the evaluation's row is untouched, its seal covers the workloads
    edit(tmp_path / "h.db", "UPDATE workload_results SET status = 'correct', result_json = replace(result_json, "
                            "'\"incorrect\"', '\"correct\"') WHERE workload = 'unaligned'")
    with Store(tmp_path / "h.db") as store, caplog.at_level(logging.WARNING):
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", result().build_protocol) is None
        assert "edited since it was written" in caplog.text


def test_rows_sealed_by_another_key_or_before_seals_are_not_served(tmp_path, monkeypatch):
    key = ("p" * 64, "H100", "cuda", "2.11", "float32", PROTOCOL_VERSION, "eager")
    with Store(tmp_path / "h.db") as store:
        store.ensure_run("r", kind="eval", target="cuda", device_name="GPU")
        store.add("r", result(), candidate_source="S", problem_source="P")
        store.add_baseline(key, Baseline(timing=TIMING))
        store.add_peaks("H100", "cuda", "2.11", Peaks(bandwidth_gbs=3000.0))
        assert store.baselines(*key[:5]) and store.peaks("H100", "cuda", "2.11")
    monkeypatch.setenv(seal.KEY_FILE_ENV, str(tmp_path / "another" / "key"))
    with Store(tmp_path / "h.db") as store:
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", result().build_protocol) is None
        assert store.baselines(*key[:5]) == {} and store.peaks("H100", "cuda", "2.11") is None
        assert store.results("r") == [result()]  # still readable: the report shows what was stored
    edit(tmp_path / "h.db", "UPDATE evaluations SET seal = NULL")  # a row of schema 4, before seals
    with Store(tmp_path / "h.db") as store:
        assert store.find("c" * 64, "p" * 64, "GPU", "cuda", result().build_protocol) is None


def test_peaks_and_baselines_edited_in_the_file_are_measured_again(tmp_path):
    key = ("p" * 64, "H100", "cuda", "2.11", "float32", PROTOCOL_VERSION, "eager")
    with Store(tmp_path / "h.db") as store:
        store.add_baseline(key, Baseline(timing=TIMING))
        store.add_peaks("H100", "cuda", "2.11", Peaks(bandwidth_gbs=3000.0))
    edit(tmp_path / "h.db", "UPDATE baselines SET baseline_json = replace(baseline_json, '2.0', '20.0')")
    edit(tmp_path / "h.db", "UPDATE peaks SET peaks_json = replace(peaks_json, '3000.0', '3000000.0')")
    with Store(tmp_path / "h.db") as store:
        assert store.baselines(*key[:5]) == {} and store.peaks("H100", "cuda", "2.11") is None
        store.add_peaks("H100", "cuda", "2.11", Peaks(bandwidth_gbs=3000.0))  # measured again, replaced
        assert store.peaks("H100", "cuda", "2.11").bandwidth_gbs == 3000.0


def fake_pch(root, name="0" * 32):
    directory = root / name
    (directory / "torch").mkdir(parents=True)
    (directory / PCH_FILE).write_bytes(b"gch")
    (directory / "torch" / "extension.h").symlink_to("/usr/include/stdio.h")
    return directory


def test_a_precompiled_header_is_trusted_only_while_its_file_is_the_one_sealed(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_PCH_DIR", str(tmp_path / "pch"))
    made, planted = fake_pch(tmp_path / "pch"), fake_pch(tmp_path / "pch", "1" * 32)
    pch_maker.seal_pch(made)
    assert pch_maker.trusted_keys() == [made.name]  # the planted one: made outside the harness
    gch = made / PCH_FILE
    gch.write_bytes(b"gch")  # the same bytes, written again: a new change time
    assert pch_maker.trusted_keys() == []
    pch_maker.seal_pch(made)
    replaced = made / "replacement"
    replaced.write_bytes(b"gch")
    os.replace(replaced, gch)
    assert pch_maker.trusted_keys() == []
    assert pch_maker._clear_unsealed(planted) and not (planted / PCH_FILE).exists()  # made again next


def test_a_build_child_takes_only_a_trusted_precompiled_header(tmp_path, monkeypatch):
    import torch
    import torch.utils.cpp_extension as cpp_ext

    from harness.fastbuild import pch
    monkeypatch.setenv("HARNESS_PCH_DIR", str(tmp_path / "pch"))
    requests = tmp_path / "requests.jsonl"
    monkeypatch.setenv("HARNESS_PCH_REQUESTS", str(requests))
    arguments = {"cpp_sources": "x", "extra_cflags": ["-O1"]}
    header = Path(torch.__file__).parent / "include" / pch.PCH_HEADER
    command = pch._precompile_command(cpp_ext, arguments, header)
    directory = fake_pch(tmp_path / "pch", pch._key(command))
    monkeypatch.setenv("HARNESS_PCH_TRUSTED", "")
    assert pch.precompiled_header_dir(cpp_ext, arguments) is None
    assert '"make"' in requests.read_text()  # made (again) by the parent after this build
    monkeypatch.setenv("HARNESS_PCH_TRUSTED", f"{'2' * 32},{directory.name}")
    assert pch.precompiled_header_dir(cpp_ext, arguments) == directory
