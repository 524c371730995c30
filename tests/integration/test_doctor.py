"""`harness doctor`: the real checks on this machine, a PATH without the compilers, a results directory `eval`
refuses, cores kept busy by real processes, and a real local model server."""
import os
import subprocess
import sys

import pytest

from harness.cli import doctor
from harness.eval.cores_load import CoresLoad, measure
from harness.eval.cpu_ceiling import CONTENDED_SHARE
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
    assert found["results directory"]["status"] in ("ok", "warn") and "GB free" in found["results directory"]["detail"]
    assert not (tmp_path / "results").exists()  # made to try it, and removed again
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


@pytest.mark.parametrize("where", ["/etc/hostname/sub", "/proc/nope"])
def test_a_results_directory_eval_refuses_fails_doctor_too(tmp_path, where):
    """One check for both: what `eval` refuses with exit 2, doctor fails with exit 1, in the same words."""
    candidate = tmp_path / "candidate.py"
    candidate.write_text("x = 1\n")
    refused = run_cli("eval", "--target", "cpu", "--results-dir", where, "--problem", "cpu/relu", candidate)
    assert refused.returncode == 2, refused.stderr
    proc = run_cli("doctor", "--json", "--results-dir", where, env={"OPENAI_BASE_URL": ""})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = checks(proc)["results directory"]
    assert found["status"] == "fail" and found["detail"] in " ".join(refused.stderr.split())
    assert "--results-dir" in found["fix"] and "GB free" not in found["detail"]


def test_cores_kept_busy_by_other_processes_are_a_warning(tmp_path):
    """A spinning process pinned to each core this process may use: doctor measures them and says what they do to
    the results (a warning: the harness still works, exit 0)."""
    cores = sorted(os.sched_getaffinity(0))
    spin = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin, str(core)]) for core in cores]
    try:
        proc = run_cli("doctor", "--json", "--results-dir", tmp_path, env={"OPENAI_BASE_URL": ""})
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = checks(proc)["cores"]
    assert found["status"] == "warn" and "contended" in found["detail"] and "not counted" in found["detail"]
    assert "idle" in found["fix"]


@pytest.mark.parametrize(("foreign", "status"), [(0.0, "ok"), (CONTENDED_SHARE, "ok"), (CONTENDED_SHARE + 0.01,
                                                                                           "warn"), (1.0, "warn")])
def test_the_cores_warning_starts_where_results_are_flagged_contended(foreign, status):
    check = doctor.cores(CoresLoad(foreign=foreign, cores=2, wall_s=0.5))
    assert check.status == status and f"{foreign:.0%} of 2 core(s)" in check.detail


def test_the_cores_load_is_read_from_proc_stat_less_this_process():
    """Two /proc/stat texts at the boundary where the harness reads them: the busy ticks between them (steal
    included, idle and iowait not) over the usable cores' time."""
    cpus = sorted(os.sched_getaffinity(0))
    hz = os.sysconf("SC_CLK_TCK")

    def stat(busy_each: int) -> str:  # user, nice, system, idle, iowait, irq, softirq, steal
        return "cpu  0 0 0 0 0 0 0 0\n" + "".join(f"cpu{n} {busy_each} 0 0 9999 500 0 0 0\n" for n in cpus)

    texts = iter([stat(100), stat(100)])
    idle = measure(0.05, read=lambda: next(texts))
    assert idle is not None and idle.foreign == 0.0 and idle.cores == len(cpus) and not idle.contended
    texts = iter([stat(100), stat(100 + hz)])  # a whole second of ticks on every core within 0.05 s
    busy = measure(0.05, read=lambda: next(texts))
    assert busy is not None and busy.foreign == 1.0 and busy.contended
    assert measure(0.01, read=lambda: None) is None  # no /proc/stat: nothing to tell
