"""The command line without builds: problem listing, bad input, empty stores."""

from harness.cli.main import main
from tests.conftest import FIXTURES, REPO, json_lines, run_cli


def test_problems_list_json(capsys):
    assert main(["problems", "list", "--json"]) == 0
    rows = json_lines(capsys.readouterr().out)
    ids = {r["problem"] for r in rows}
    assert {"level1/reverse_cumsum", "level1/sum_dim1", "level1/masked_cumsum"} <= ids
    assert all({"problem", "level", "path"} <= set(r) for r in rows)


def test_problems_list_by_level(capsys):
    assert main(["problems", "list", "--level", "1", "--json"]) == 0
    rows = json_lines(capsys.readouterr().out)
    assert rows and all(r["level"] == 1 for r in rows)


def test_problems_show_by_id_and_path(capsys):
    assert main(["problems", "show", "level1/sum_dim1", "--json"]) == 0
    (shown,) = json_lines(capsys.readouterr().out)
    assert shown["problem"] == "level1/sum_dim1" and "keepdim=True" in shown["source"]
    assert main(["problems", "show", str(FIXTURES / "problems" / "relu.py")]) == 0
    assert "torch.relu" in capsys.readouterr().out


def test_unknown_problem_exits_2_with_a_suggestion():
    proc = run_cli("problems", "show", "level1/reverse_cumsun")
    assert proc.returncode == 2
    assert "did you mean 'level1/reverse_cumsum'" in " ".join(proc.stderr.split())


def test_malformed_problem_exits_2_naming_file_and_gap(tmp_path):
    for name, gap in (("no_model.py", "class Model"), ("syntax_error.py", "syntax error"),
                      ("init_not_list.py", "must return a list"), ("no_get_inputs.py", "get_inputs()")):
        path = FIXTURES / "problems" / name
        proc = run_cli("eval", "--target", "cpu", "--results-dir", tmp_path, "--problem", path,
                       FIXTURES / "solutions" / "correct" / "cpu_relu.py")
        message = " ".join(proc.stderr.split())
        assert proc.returncode == 2, proc.stderr
        assert name in message and gap in message
    assert not (tmp_path / "harness.db").exists()  # nothing half-written


def test_missing_candidate_file_exits_2(tmp_path):
    proc = run_cli("eval", "--target", "cpu", "--results-dir", tmp_path, "--problem", "level1/sum_dim1",
                   tmp_path / "nope.py")
    assert proc.returncode == 2 and "nope.py" in proc.stderr and "cannot read candidate" in proc.stderr


def test_cuda_target_without_gpu_exits_2(tmp_path):
    proc = run_cli("eval", "--target", "cuda", "--results-dir", tmp_path, "--problem", "level1/sum_dim1",
                   FIXTURES / "solutions" / "correct" / "cpu_relu.py", env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 2 and "--target cpu" in " ".join(proc.stderr.split())


def test_report_without_results_exits_2(tmp_path):
    proc = run_cli("report", "--results-dir", tmp_path)
    assert proc.returncode == 2 and "no results yet" in proc.stderr


def test_bad_setting_from_the_environment_exits_2(tmp_path):
    proc = run_cli("run", "--target", "cpu", "--results-dir", tmp_path, env={"HARNESS_TRIALS": "many"})
    assert proc.returncode == 2 and "trials" in proc.stderr


def test_a_results_dir_that_cannot_be_created_exits_2_before_anything_runs(tmp_path):
    (tmp_path / "file").write_text("")
    for bad in (tmp_path / "file", tmp_path / "file" / "below"):
        proc = run_cli("run", "--target", "cpu", "--problem", "cpu/relu", "--results-dir", bad)
        assert proc.returncode == 2 and "cannot create the results directory" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_malformed_model_url_exits_2_before_any_request(tmp_path):
    for url, env in (("localhost:8000/v1", {}), ("ftp://host/v1", {}), ("http://host:port/v1", {}),
                     (None, {"OPENAI_BASE_URL": "http//host/v1"})):
        flag = ["--base-url", url] if url else []
        proc = run_cli("run", "--target", "cpu", "--model", "m", *flag, "--problem", "cpu/relu", "--results-dir",
                       tmp_path, env=env)
        assert proc.returncode == 2, proc.stderr
        assert ("--base-url" if url else "OPENAI_BASE_URL") in proc.stderr and "--resume" not in proc.stderr


def test_version_names_what_results_depend_on():
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("kernel-harness ") and "evaluation protocol" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == ["python", "torch", "triton", "nvcc"]


def test_a_bad_unrelated_setting_breaks_only_the_commands_that_use_it(tmp_path):
    from harness.store import Store

    with Store(tmp_path / "harness.db") as store:
        store.ensure_run("r", kind="eval", target="cpu", device_name="CPU")
    env = {"HARNESS_TRIALS": "many"}
    proc = run_cli("runs", "--json", "--results-dir", tmp_path, env=env)
    assert proc.returncode == 0 and json_lines(proc.stdout)[0]["run"] == "r", proc.stderr
    assert run_cli("cache", "--json", "--results-dir", tmp_path, env=env).returncode == 0
    proc = run_cli("eval", "--problem", "cpu/relu", "--target", "cpu", "--results-dir", tmp_path, "x.py", env=env)
    assert proc.returncode == 2 and "HARNESS_TRIALS" in proc.stderr


def test_bad_flag_values_exit_2():
    proc = run_cli("eval", "--problem", "x", "--eval-timeout", "-3", "a.py")
    assert proc.returncode == 2 and "must be positive" in proc.stderr


def test_help_explains_every_command():
    proc = run_cli("--help")
    for command in ("problems", "eval", "run", "report", "runs"):
        assert command in proc.stdout
    assert "exit status 0" in " ".join(run_cli("eval", "--help").stdout.split()).lower()


def test_console_script_is_installed():
    import shutil
    import subprocess
    exe = shutil.which("harness")
    assert exe, "pip install -e . installs the `harness` command"
    assert subprocess.run([exe, "--help"], capture_output=True, cwd=REPO).returncode == 0


def test_settings_paths_are_absolute(tmp_path, monkeypatch):
    from harness.config import load_settings
    monkeypatch.chdir(tmp_path)
    settings = load_settings(db_path="x/h.db")
    assert settings.results_dir == tmp_path / "results" and settings.cache_dir.is_absolute()
    assert settings.db == tmp_path / "x" / "h.db"


def test_an_uninstalled_checkout_reads_its_version_from_its_own_pyproject(tmp_path, monkeypatch):
    import importlib.metadata

    from harness.config import tomllib
    from harness.eval import build

    installed = importlib.metadata.version

    def without_the_harness(name):
        if name == "kernel-harness":
            raise importlib.metadata.PackageNotFoundError(name)
        return installed(name)

    monkeypatch.setattr(importlib.metadata, "version", without_the_harness)
    build.harness_version.cache_clear()
    try:
        assert build.harness_version() == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
        (tmp_path / "pyproject.toml").write_text('[project]\nname = "another"\nversion = "9.9"\n')
        monkeypatch.setattr(build, "PACKAGE_ROOT", tmp_path)
        build.harness_version.cache_clear()
        assert build.harness_version() == "unknown"  # a pyproject.toml beside site-packages is not ours
    finally:
        build.harness_version.cache_clear()
