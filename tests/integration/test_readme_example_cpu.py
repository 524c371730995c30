"""README's minimal candidate is a real answer: its `harness eval` command, run as README shows it on the file README
shows, builds it and finds it correct on every workload of its problem."""
import re
import shlex

from tests.conftest import REPO, json_lines, run_cli
from tests.unit.test_readme import sections

MAX_EXAMPLE_LINES = 40  # "a minimal example of about 30 lines" (issue 58)


def readme_example() -> tuple[str, list[str]]:
    """The Python block of README's "Writing a candidate" and the `harness eval ...` command that names its file."""
    section = sections((REPO / "README.md").read_text())["Writing a candidate"]
    (source,) = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    (command,) = re.findall(r"`(harness eval [^`]+)`", section)
    return source, shlex.split(command)


def test_the_minimal_example_is_short_and_names_its_file():
    source, command = readme_example()
    assert len(source.splitlines()) <= MAX_EXAMPLE_LINES
    assert "class ModelNew" in source
    assert command[-1].endswith(".py") and "--target" in command and "cpu" in command


def test_readme_minimal_example_is_correct(tmp_path):
    source, command = readme_example()
    (tmp_path / command[-1]).write_text(source)
    proc = run_cli(*command[1:], "--json", "--results-dir", tmp_path / "results", "--timing-budget", "1",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (result,) = json_lines(proc.stdout)
    assert result["status"] == "correct", result["error"]
    assert all(w["status"] == "correct" for w in result["workloads"]), result["workloads"]
    assert result["coverage"] is not None and result["coverage"] > 0.5, "its own kernel does the work"
