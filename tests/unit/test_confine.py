"""What the parent lets a candidate's children touch (eval/confine.py), and the precompiled headers they ask
for (fastbuild/maker.py): a request is a candidate's word, so only well-formed ones for their own key count."""
import json
from pathlib import Path

import pytest

from harness.config import load_settings
from harness.device import discover
from harness.eval import confine
from harness.eval.build import build_sha256
from harness.eval.candidate import candidate_from_source
from harness.fastbuild import maker as pch_maker


def test_the_store_and_credentials_are_hidden_and_off_means_no_sandbox(tmp_path):
    settings = load_settings(results_dir=tmp_path / "r")
    sandbox = confine.confinement(settings)
    db = tmp_path / "r" / "harness.db"
    assert {db, db.with_name("harness.db-wal"), db.with_name("harness.db-shm")} <= set(sandbox.hidden)
    policy = sandbox.policy(tmp_path / "work", gpu=True)
    assert (policy.scratch, policy.gpu, policy.network) == (tmp_path / "work", True, False)
    assert confine.confinement(load_settings(results_dir=tmp_path / "r", sandbox="off")) is None


def test_builds_made_without_the_sandbox_are_kept_apart():
    candidate, device = candidate_from_source("x = 1\n"), discover("cpu")
    assert build_sha256(candidate, device) != build_sha256(candidate, device, sandboxed=False)


@pytest.fixture
def pch_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_PCH_DIR", str(tmp_path / "pch"))
    return tmp_path / "pch"


def test_malformed_and_excess_requests_make_nothing(tmp_path, pch_root, monkeypatch):
    made = []
    monkeypatch.setattr(pch_maker, "run_child", lambda args, **kw: made.append(args))
    good = {"make": "a" * 32, "command": ["g++", "-x", "c++-header", "h"]}
    lines = ["not json", json.dumps([1]), json.dumps({"make": "../../etc", "command": ["x"]}),
             json.dumps({"make": "b" * 32, "command": "g++ -o /etc/passwd"}),
             *(json.dumps({**good, "make": key * 32}) for key in "a12345")]
    requests = tmp_path / "pch-requests.jsonl"
    requests.write_text("\n".join(lines) + "\n")
    pch_maker.make_requested_pchs(requests, None)
    assert sorted(made) == [["pch", str(pch_root / (key * 32))] for key in "123a"]  # MAX_REQUESTS well-formed ones
    assert json.loads((pch_root / ("a" * 32) / "command.json").read_text()) == good["command"]
    assert sorted(p.name for p in pch_root.iterdir()) == [key * 32 for key in "123a"]


def test_the_pchs_one_build_asked_for_are_made_side_by_side(tmp_path, pch_root, monkeypatch):
    import threading

    both_running = threading.Barrier(2, timeout=20)  # one make at a time never gets past it
    made = []

    def make(args, **kw):
        both_running.wait()
        made.append(args)

    monkeypatch.setattr(pch_maker, "run_child", make)
    requests = tmp_path / "pch-requests.jsonl"
    requests.write_text("".join(json.dumps({"make": key * 32, "command": ["x"]}) + "\n" for key in "abb"))
    pch_maker.make_requested_pchs(requests, None)
    assert sorted(made) == [["pch", str(pch_root / (key * 32))] for key in "ab"]  # a key asked twice: made once


def test_a_retire_request_retires_an_existing_pch_only(tmp_path, pch_root):
    (pch_root / ("d" * 32)).mkdir(parents=True)
    requests = tmp_path / "pch-requests.jsonl"
    requests.write_text(json.dumps({"retire": "d" * 32, "why": "failed with it"}) + "\n"
                        + json.dumps({"retire": "e" * 32, "why": "no such PCH"}) + "\n")
    pch_maker.make_requested_pchs(requests, None)
    assert "failed with it" in (pch_root / ("d" * 32) / "failed.log").read_text()
    assert not (pch_root / ("e" * 32)).exists()


def test_a_use_request_marks_an_existing_pch_used_now(tmp_path, pch_root):
    import os
    import time

    used = pch_root / ("c" * 32)
    used.mkdir(parents=True)
    os.utime(used, (1, 1))
    requests = tmp_path / "pch-requests.jsonl"
    requests.write_text(json.dumps({"use": "c" * 32}) + "\n" + json.dumps({"use": "../../etc"}) + "\n")
    pch_maker.make_requested_pchs(requests, None)
    assert time.time() - used.stat().st_mtime < 60 and sorted(p.name for p in pch_root.iterdir()) == ["c" * 32]


def test_the_pch_child_makes_only_the_command_of_its_key(tmp_path):
    import subprocess
    import sys

    directory = tmp_path / ("f" * 32)
    directory.mkdir()
    (directory / "command.json").write_text(json.dumps(["g++", "-x", "c++-header", "/dev/null"]))
    done = subprocess.run([sys.executable, "-m", "harness.child", "pch", str(directory)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "is not the command of its key" in done.stderr
    assert sorted(p.name for p in directory.iterdir()) == ["command.json"]


def test_eval_stops_with_status_2_and_the_way_round_where_the_kernel_refuses_the_sandbox(tmp_path):
    import shutil
    import subprocess
    import sys

    if not shutil.which("unshare"):
        pytest.skip("needs util-linux's unshare")
    candidate = Path(__file__).parents[1] / "fixtures" / "solutions" / "correct" / "cpu_relu.py"
    command = (f"{sys.executable} -m harness eval --target cpu --results-dir {tmp_path / 'r'} --problem cpu/relu "
               f"{candidate}")
    script = f"echo 0 > /proc/sys/user/max_user_namespaces && exec {command}"
    done = subprocess.run(["unshare", "-r", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    assert "the kernel refused new user, mount, PID" in done.stderr and "--sandbox off" in done.stderr
    assert not (tmp_path / "r" / "cache").exists()  # nothing was built
