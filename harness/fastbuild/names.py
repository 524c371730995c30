"""The switch, and what the build child, the compilers it starts and the parent say to each other about the
precompiled headers and nvcc's front ends: environment variables, file names, the request file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

# Build acceleration on or off. The parent always sets it in a build child's environment (eval/build.py build_env),
# from the build_acceleration setting; a child started without it (a test, tests/naive_eval.py) accelerates.
ENV = "HARNESS_BUILD_ACCELERATION"
OFF = frozenset({"0", "false", "off", "no", "n", "f"})  # what pydantic's bool reads as false, as config.py parses it

PCH_RETRY = "harness: the build with the precompiled torch/extension.h failed; building again without it"
# The shared precompiled headers (pch.py makes them): one directory per key. A sandboxed build child may not write
# there; it appends what it needs to its build directory's PCH_REQUESTS, and the parent has each made by a child of
# its own (`python -m harness.child pch DIR`, DIR/PCH_COMMAND the command; maker.py).
PCH_DIR_ENV = "HARNESS_PCH_DIR"
PCH_HEADER = Path("torch") / "extension.h"  # in each PCH directory: a link to torch's header,
PCH_FILE = PCH_HEADER.with_name(PCH_HEADER.name + ".gch")  # the PCH beside it,
PCH_FAILED = "failed.log"  # and, where making it failed or it was retired, why
HOST_PCH_PREFIX = "prefix.h"  # or, in a directory of nvcc's host compile (host_pch.py), the shared text
HOST_PCH_FILE = HOST_PCH_PREFIX + ".gch"  # and its PCH
PCH_REQUESTS = "pch-requests.jsonl"
PCH_REQUESTS_ENV = "HARNESS_PCH_REQUESTS"
PCH_COMMAND = "command.json"
# The keys of the PCHs whose seal the parent checked before the build (maker.py): the only ones it may use
PCH_TRUSTED_ENV = "HARNESS_PCH_TRUSTED"
# Set for a build granted a second core for nvcc's two front ends (front_ends.py, nvcc_split.py)
SPLIT_NVCC_ENV = "HARNESS_SPLIT_NVCC"


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(ENV, "1").strip().lower() not in OFF


def pch_root() -> Path:
    """Shared by every results directory: a PCH depends only on its key (~0.8 GB each, one per flag set)."""
    if os.environ.get(PCH_DIR_ENV):
        return Path(os.environ[PCH_DIR_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kernel-harness" / "pch"


def request_pch(record: dict) -> None:
    """Ask the parent for a PCH to be made, retired or marked used after this build (a build child, and the
    compilers it starts, may not write them): one JSON line in its PCH_REQUESTS."""
    path = os.environ.get(PCH_REQUESTS_ENV)
    if path:
        with Path(path).open("a") as f:
            f.write(json.dumps(record, default=str) + "\n")
