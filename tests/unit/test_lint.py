"""ruff and mypy, configured in pyproject.toml (line length 120; mypy's strictness there), are clean: the README's
test command lints and type-checks too."""
import subprocess
import sys

from tests.conftest import REPO


def test_ruff_is_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean_on_harness():
    # pyproject's [tool.mypy] names harness/ and the strictness; its cache (.mypy_cache, ignored by git) makes
    # a second run take seconds
    proc = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_stated_strictness_stays_on():
    """The levels pyproject.toml states and justifies: a rule dropped from it fails here, not silently."""
    from harness.config import tomllib

    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]
    assert {"C901", "PLR0913"} <= set(tool["ruff"]["lint"]["select"])
    assert tool["ruff"]["lint"]["mccabe"]["max-complexity"] <= 12 and tool["ruff"]["lint"]["pylint"]["max-args"] <= 7
    flags = ("strict_optional", "check_untyped_defs", "no_implicit_optional", "warn_unused_ignores",
             "warn_redundant_casts")
    assert all(tool["mypy"].get(flag) is True for flag in flags), tool["mypy"]
    assert tool["mypy"]["files"] == ["harness"]
