import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # execnet gives its workers COLUMNS=80 and LINES=24, which a plain pytest run does not have: without them the
    # harness prints tables piped to a file at their full width, and the tests read them so
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

FIXTURES = Path(__file__).parent / "fixtures"
SOLUTIONS = FIXTURES / "solutions"
REPO = Path(__file__).parent.parent


def run_cli(*args: str, env: dict | None = None, timeout: float = 1800,
            cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The real `harness` command of this checkout, in a child process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def cli():
    return run_cli


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """GPU tests run one at a time (they time things on one device): `-m gpu` turns the two workers off."""
    if "gpu" in (config.option.markexpr or "") and getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0
        config.option.dist = "no"
