"""Settings in layers: defaults < harness.toml (or --config FILE) < HARNESS_* < flags; provenance; errors;
`harness config show`."""
import argparse
from pathlib import Path

import pytest

from harness.cli import config as cli_config
from harness.config import (
    CONFIGURABLE,
    ENV,
    FLAGS,
    INTERNAL,
    SETTINGS,
    Settings,
    SettingsError,
    explain_settings,
    load_settings,
    load_settings_with_sources,
)
from tests.conftest import json_lines


@pytest.fixture(autouse=True)
def clean(tmp_path, monkeypatch):
    """Each test in its own directory, with no HARNESS_* variable from the caller's environment."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sources(**kwargs) -> dict[str, str]:
    return {s.setting: s.source for s in explain_settings(**kwargs)}


def test_every_configurable_setting_has_one_variable_and_old_names_still_work():
    assert sorted(ENV.values()) == sorted(CONFIGURABLE)  # each once
    assert set(CONFIGURABLE) | INTERNAL == set(SETTINGS)
    assert "timing.budget_s" in SETTINGS and "timing" not in SETTINGS
    old = {"HARNESS_RESULTS_DIR", "HARNESS_DB", "HARNESS_TRIALS", "HARNESS_BUILD_TIMEOUT", "HARNESS_EVAL_TIMEOUT",
           "HARNESS_BUILD_WORKERS", "HARNESS_GPUS", "HARNESS_EXECUTOR", "HARNESS_RAY_ADDRESS", "HARNESS_MAX_SPEEDUP",
           "HARNESS_COMPILE_BASELINES", "HARNESS_CONTENTION_WAIT"}
    assert old <= set(ENV)
    assert {"HARNESS_TIMING_BUDGET", "HARNESS_MAX_JOBS", "HARNESS_DTYPE", "HARNESS_PROBLEMS_DIR",
            "HARNESS_SOLUTIONS_DIR"} <= set(ENV)
    assert set(FLAGS) <= set(SETTINGS)


def test_defaults(tmp_path):
    settings = load_settings()
    assert settings == Settings()
    assert settings.trials == 5 and settings.timing.budget_s is None and settings.problems_dir is None
    # the target chooses the budget unless one is set
    assert settings.timing.on("cpu").budget() == 2.0 and settings.timing.on("cuda").budget() == 5.0
    assert load_settings(timing={"budget_s": 7}).timing.on("cpu").budget() == 7.0
    with pytest.raises(ValueError, match="before a target was chosen"):
        settings.timing.budget()
    assert settings.solutions_dir == tmp_path / "solutions" and settings.results_dir == tmp_path / "results"
    assert set(sources().values()) == {"default"}


def test_each_layer_overrides_the_one_below(tmp_path, monkeypatch):
    write(tmp_path / "harness.toml", "trials = 3\nmax_jobs = 4\ndtype = 'bfloat16'\ngpus = 2\n"
                                     "[timing]\nbudget_s = 2\nmin_runs = 7\n")
    monkeypatch.setenv("HARNESS_MAX_JOBS", "6")
    monkeypatch.setenv("HARNESS_GPUS", "3")
    monkeypatch.setenv("HARNESS_TIMING_BUDGET", "1.5")
    settings, found = load_settings_with_sources(gpus=4, timing={"budget_s": 0.5, "max_runs": None})
    got = {s.setting: (s.value, s.source) for s in found}
    assert got["eval_timeout_s"] == (300.0, "default")
    assert got["trials"] == (3, "config file harness.toml")
    assert got["dtype"] == ("bfloat16", "config file harness.toml")
    assert got["timing.min_runs"] == (7, "config file harness.toml")
    assert got["max_jobs"] == (6, "env HARNESS_MAX_JOBS")
    assert got["gpus"] == (4, "flag --gpus")
    assert got["timing.budget_s"] == (0.5, "flag --timing-budget")
    assert got["timing.max_runs"] == (1000, "default")  # a flag of None is not given
    assert settings.timing.min_runs == 7 and settings.timing.budget_s == 0.5 and settings.max_jobs == 6


def test_env_below_flags_and_empty_variables_are_unset(monkeypatch):
    monkeypatch.setenv("HARNESS_TRIALS", "2")
    monkeypatch.setenv("HARNESS_DTYPE", "")
    assert load_settings().trials == 2
    assert load_settings(trials=9).trials == 9
    assert sources()["dtype"] == "default"


def test_provenance_of_every_kind(tmp_path, monkeypatch):
    config = write(tmp_path / "conf" / "mine.toml", "eval_timeout_s = 60\n")
    monkeypatch.setenv("HARNESS_SOLUTIONS_DIR", "sol")
    found = {s.setting: s for s in explain_settings(config, trials=2, rebuild=False, static_rules=False)}
    assert found["max_speedup"].source == "default"
    assert found["eval_timeout_s"].source == f"config file {config}"
    assert found["solutions_dir"].source == "env HARNESS_SOLUTIONS_DIR"
    assert found["solutions_dir"].value == tmp_path / "sol"  # relative to the working directory
    assert found["trials"].source == "flag --trials"
    assert found["rebuild"].source == "argument rebuild"  # given by code, no command-line flag
    assert found["static_rules"].source == "argument static_rules" and found["static_rules"].env is None
    assert found["timing.budget_s"].env == "HARNESS_TIMING_BUDGET" and found["db_path"].flag == "--db"
    assert found["trials"].description.startswith("Correctness trials")
    assert [s.setting for s in explain_settings()] == list(SETTINGS)


def test_relative_paths_in_the_file_are_relative_to_its_directory(tmp_path):
    config = write(tmp_path / "project" / "conf.toml",
                   f"results_dir = 'out'\ndb_path = '../db/h.db'\nproblems_dir = '{tmp_path / 'abs'}'\n")
    settings = load_settings(config)
    assert settings.results_dir == tmp_path / "project" / "out"
    assert settings.db == tmp_path / "db" / "h.db"
    assert settings.problems_dir == tmp_path / "abs"
    assert settings.solutions_dir == tmp_path / "solutions"  # defaults stay relative to the working directory
    assert load_settings(config, results_dir="here").results_dir == tmp_path / "here"  # flags: to the cwd


def test_the_working_directory_file_is_read_unless_another_is_given(tmp_path):
    write(tmp_path / "harness.toml", "trials = 3\n")
    other = write(tmp_path / "other.toml", "trials = 4\n")
    assert load_settings().trials == 3
    assert load_settings(other).trials == 4  # only the given file, not both
    assert load_settings(str(other)).trials == 4


def test_a_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(SettingsError, match="config file .*nope.toml not found"):
        load_settings(tmp_path / "nope.toml")
    with pytest.raises(SettingsError, match="not a file"):
        load_settings(tmp_path)


def test_unknown_key_names_the_file_and_suggests(tmp_path):
    write(tmp_path / "harness.toml", "trals = 3\n")
    with pytest.raises(SettingsError) as exc:
        load_settings()
    message = str(exc.value)
    assert message.startswith('unknown setting "trals" in harness.toml')
    assert "did you mean 'trials'" in message and "known: results_dir, db_path, trials" in message
    write(tmp_path / "harness.toml", "[timing]\nbudget = 3\n")
    with pytest.raises(SettingsError, match='unknown setting "timing.budget" in harness.toml.*timing.budget_s'):
        load_settings()
    write(tmp_path / "harness.toml", "static_rules = false\n")
    with pytest.raises(SettingsError, match="static_rules.*only by code"):
        load_settings()
    write(tmp_path / "harness.toml", "timing = 3\n")
    with pytest.raises(SettingsError, match=r"timing in harness.toml must be a table"):
        load_settings()
    (tmp_path / "harness.toml").unlink()
    with pytest.raises(SettingsError, match='unknown setting "trails" in the arguments'):
        load_settings(trails=3)


def test_wrong_type_in_the_file_names_setting_and_file(tmp_path):
    write(tmp_path / "harness.toml", "trials = 'many'\n[timing]\nbudget_s = 'long'\n")
    with pytest.raises(SettingsError) as exc:
        load_settings()
    message = str(exc.value)
    assert "bad setting trials (config file harness.toml): Input should be a valid integer" in message
    assert "bad setting timing.budget_s (config file harness.toml): Input should be a valid number" in message
    write(tmp_path / "harness.toml", "executor = 'slurm'\n")
    with pytest.raises(SettingsError, match=r"bad setting executor \(config file harness.toml\): Input should be "
                                            r"'local' or 'ray', got 'slurm'"):
        load_settings()


def test_bad_toml_names_the_file_and_line(tmp_path):
    write(tmp_path / "harness.toml", "trials = 3\nresults_dir = \n")
    with pytest.raises(SettingsError, match=r"harness.toml: not valid TOML: .*line 2"):
        load_settings()


def test_bad_env_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("HARNESS_TRIALS", "0")
    with pytest.raises(SettingsError, match=r"^bad setting trials \(env HARNESS_TRIALS\): Input should be greater "
                                            r"than or equal to 1, got '0'$"):
        load_settings()
    monkeypatch.setenv("HARNESS_TRIALS", "many")
    with pytest.raises(ValueError, match="valid integer"):  # SettingsError is a ValueError
        load_settings()
    monkeypatch.delenv("HARNESS_TRIALS")
    monkeypatch.setenv("HARNESS_COMPILE_BASELINES", "maybe")
    with pytest.raises(SettingsError, match=r"compile_baselines \(env HARNESS_COMPILE_BASELINES\)"):
        load_settings()


def test_bad_flag_value_names_the_flag():
    with pytest.raises(SettingsError, match=r"bad setting contention_wait_s \(flag --contention-wait\)"):
        load_settings(contention_wait_s=-1)


def test_booleans_and_timing_from_the_environment(monkeypatch):
    monkeypatch.setenv("HARNESS_COMPILE_BASELINES", "1")
    monkeypatch.setenv("HARNESS_FORCE", "false")
    monkeypatch.setenv("HARNESS_TIMING_TARGET_RSE", "0.05")
    monkeypatch.setenv("HARNESS_PROBLEMS_DIR", "probs")
    settings = load_settings()
    assert settings.compile_baselines is True and settings.force is False and settings.timing.target_rse == 0.05
    assert settings.problems_dir == Path.cwd() / "probs"


# ---- harness config show ----

def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harness")
    cli_config.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(list(argv))


def test_config_show_json(tmp_path, monkeypatch, capsys):
    config = write(tmp_path / "c.toml", "trials = 3\n")
    monkeypatch.setenv("HARNESS_DTYPE", "float16")
    args = parse("config", "show", "--config", str(config), "--json")
    assert args.func(args) == 0
    rows = {r["setting"]: r for r in json_lines(capsys.readouterr().out)}  # a line a setting
    assert list(rows) == list(SETTINGS)
    assert rows["trials"]["value"] == 3 and rows["trials"]["source"] == f"config file {config}"
    assert rows["dtype"] == {"setting": "dtype", "value": "float16", "source": "env HARNESS_DTYPE",
                             "description": "Floating inputs and parameters are cast to this (fp32, fp16 or bf16)",
                             "env": "HARNESS_DTYPE", "flag": "--dtype"}
    assert rows["results_dir"]["value"] == str(tmp_path / "results") and rows["db_path"]["value"] is None


def test_config_show_table(tmp_path, capsys):
    write(tmp_path / "harness.toml", "[timing]\nbudget_s = 2\n")
    args = parse("config", "show")
    assert args.config is None and args.func(args) == 0
    text = capsys.readouterr().out
    assert "setting" in text and "source" in text and "description" in text
    line = next(line for line in text.splitlines() if "timing.budget_s" in line)
    assert "2.0" in line and "config file harness.toml" in line
    assert "default" in next(line for line in text.splitlines() if "max_speedup" in line)


def test_config_show_reports_bad_settings(tmp_path):
    args = parse("config", "show", "--config", str(tmp_path / "missing.toml"))
    with pytest.raises(SettingsError, match="missing.toml not found"):
        args.func(args)


def test_config_show_takes_a_shared_config_option():
    shared = argparse.ArgumentParser(add_help=False)
    cli_config.config_option(shared)
    parser = argparse.ArgumentParser(prog="harness")
    cli_config.add_parser(parser.add_subparsers(dest="command", required=True), shared)
    args = parser.parse_args(["config", "show", "--config", "x.toml"])
    assert args.config == Path("x.toml") and args.json is False


def test_dtype_takes_short_and_torch_names(monkeypatch):
    assert load_settings().dtype == "float32"
    assert load_settings(dtype="fp16").dtype == "float16" and load_settings(dtype="bfloat16").dtype == "bfloat16"
    monkeypatch.setenv("HARNESS_DTYPE", "bf16")
    assert load_settings().dtype == "bfloat16"
    monkeypatch.setenv("HARNESS_DTYPE", "fp8")
    with pytest.raises(SettingsError, match=r"dtype \(env HARNESS_DTYPE\)"):
        load_settings()
