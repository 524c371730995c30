import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SOLUTIONS = FIXTURES / "solutions"
REPO = Path(__file__).parent.parent


def run_cli(*args: str, env: dict | None = None, timeout: float = 1800) -> subprocess.CompletedProcess:
    """The real `harness` command in a child process."""
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, cwd=REPO)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def cli():
    return run_cli
