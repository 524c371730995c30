"""`harness doctor`: the real checks on this machine, a PATH without the compilers, and a real local model server."""
import pytest

from harness.cli import doctor
from tests.conftest import json_lines, run_cli
from tests.openai_server import FakeOpenAI


def checks(proc) -> dict[str, dict]:
    (verdict,) = json_lines(proc.stdout)  # one line: the worst status, and every check
    assert verdict["status"] == ("fail" if proc.returncode == 1 else verdict["status"])
    return {c["check"]: c for c in verdict["checks"]}


def test_this_machine_has_what_the_tests_need(tmp_path):
    proc = run_cli("doctor", "--json", "--results-dir", tmp_path / "results", env={"OPENAI_BASE_URL": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = checks(proc)
    for name in ("C++ compiler", "ninja", "torch", "sandbox"):  # what every cpu test here relies on
        assert found[name]["status"] == "ok", found[name]
    assert found["disk: results"]["status"] in ("ok", "warn") and "GB free" in found["disk: results"]["detail"]
    assert "model server" not in found  # none given: not checked


def test_a_path_without_compilers_fails_and_says_what_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = run_cli("doctor", "--json", "--results-dir", tmp_path / "results",
                   env={"PATH": str(empty), "OPENAI_BASE_URL": ""})
    assert proc.returncode == 1, proc.stderr
    found = checks(proc)
    assert found["C++ compiler"]["status"] == "fail" and "g++" in found["C++ compiler"]["fix"]
    assert found["ninja"]["status"] == "fail" and "pip install ninja" in found["ninja"]["fix"]
    assert found["GPUs"]["status"] == "info"  # no nvidia-smi: the cpu target only, not a failure


def test_the_model_server_is_asked_for_its_models(tmp_path):
    with FakeOpenAI(lambda body: "", key="right", models=("m1", "m2")) as server:
        ok = run_cli("doctor", "--json", "--results-dir", tmp_path, "--base-url", server.base_url,
                     env={"OPENAI_API_KEY": "right"})
        wrong = run_cli("doctor", "--json", "--results-dir", tmp_path, env={"OPENAI_API_KEY": "wrong",
                                                                           "OPENAI_BASE_URL": server.base_url})
        assert server.authorization == ["Bearer right", "Bearer wrong"]
    assert checks(ok)["model server"]["status"] == "ok" and "2 model(s): m1, m2" in checks(ok)["model server"]["detail"]
    assert ok.returncode == 0, ok.stdout
    assert wrong.returncode == 1 and "refused the key (HTTP 401)" in checks(wrong)["model server"]["detail"]
    assert "wrong" not in wrong.stdout  # the key is never printed
    gone = run_cli("doctor", "--json", "--results-dir", tmp_path, "--base-url", server.base_url)  # server stopped
    assert gone.returncode == 1 and checks(gone)["model server"]["fix"].startswith("start the server")
    bad = run_cli("doctor", "--json", "--results-dir", tmp_path, "--base-url", "localhost:8000")
    assert bad.returncode == 2 and "--base-url 'localhost:8000' is not an http(s) URL" in bad.stderr, bad.stderr
    assert bad.stdout == ""  # refused before any check ran
    bad = run_cli("doctor", "--json", "--results-dir", tmp_path, env={"OPENAI_BASE_URL": "http://h:port/v1"})
    assert bad.returncode == 2 and "OPENAI_BASE_URL" in bad.stderr, bad.stderr


@pytest.mark.parametrize(("torch_cuda", "nvcc", "status"), [
    ("13.0", "13.0", "ok"), ("12.8", "12.4", "ok"), ("12.8", "13.0", "fail"), ("13.0", None, "fail")])
def test_nvcc_must_match_torch_s_cuda_major_where_a_gpu_is_visible(monkeypatch, torch_cuda, nvcc, status):
    from harness.types import DeviceInfo

    monkeypatch.setattr(doctor, "torch_cuda", lambda: torch_cuda)
    monkeypatch.setattr(doctor, "nvcc_release", lambda: nvcc)
    monkeypatch.setattr("harness.device.visible_gpus", lambda: [DeviceInfo(target="cuda", name="H100", index=0,
                                                                            arch="9.0a")])
    found = {c.name: c for c in doctor.cuda()}
    assert found["nvcc"].status == status, found
    assert found["GPUs"].status == "ok" and "H100" in found["GPUs"].detail



def test_without_a_gpu_nvcc_is_not_asked_for(monkeypatch):
    monkeypatch.setattr(doctor, "torch_cuda", lambda: "13.0")  # a CUDA build of torch on a machine with no GPU
    monkeypatch.setattr(doctor, "nvcc_release", lambda: None)
    monkeypatch.setattr("harness.device.visible_gpus", lambda: [])
    assert [(c.name, c.status) for c in doctor.cuda()] == [("torch", "ok"), ("GPUs", "info")]
