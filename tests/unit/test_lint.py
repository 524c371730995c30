"""ruff, configured in pyproject.toml (line length 120), is clean: the README's test command lints too."""
import subprocess
import sys

from tests.conftest import REPO


def test_ruff_is_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
