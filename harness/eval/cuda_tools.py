"""Finding a CUDA toolkit program that a candidate's runner runs under (compute-sanitizer: sanitize.py; Nsight
Compute's ncu: counters.py)."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

DEFAULT_CUDA_HOME = "/usr/local/cuda"


def command(program: str, override_env: str) -> list[str] | None:
    """`program`'s command line: $`override_env` (a command line, options allowed), else PATH's, else the CUDA
    toolkit's (CUDA_HOME, CUDA_PATH, /usr/local/cuda); None where there is none."""
    if os.environ.get(override_env, "").strip():
        return shlex.split(os.environ[override_env])
    found = shutil.which(program)
    if found:
        return [found]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), DEFAULT_CUDA_HOME):
        candidate = Path(home or "/nonexistent") / "bin" / program
        if candidate.is_file():
            return [str(candidate)]
    return None
