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
