"""`harness doctor`: what this machine has of what the harness needs, and what to do about what it lacks.

Each check is read without importing torch (the parent never does): the compilers by running them, torch's CUDA
from its version.py, GPUs through nvidia-smi, the sandbox by starting one, the results directory as `eval` and `run`
open it, the cores' load as the judge measures it around a timing, a model server by listing its models."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rich.markup import escape
from rich.table import Table

from harness.api import Connection
from harness.cli.console import emit_json, out
from harness.config import store_settings
from harness.eval import cores_load
from harness.eval.cpu_ceiling import CONTENDED_SHARE
from harness.fastbuild.names import pch_root
from harness.store import RESULTS_DIR_FIX, StoreError, prepare_results_dir

MIN_FREE_GB = 5.0  # one precompiled header is ~0.8 GB per flag set; builds ~10-50 MB each
STYLE = {"ok": "green", "warn": "yellow", "fail": "red", "info": "dim"}


@dataclass(frozen=True)
class Check:
    name: str
    status: str     # ok, warn (works, with a caveat), fail (something the harness needs), info (optional, absent)
    detail: str
    fix: str = ""


def add_parser(sub, store_opts: argparse.ArgumentParser) -> None:
    doctor = sub.add_parser(
        "doctor", parents=[store_opts], help="check this machine for what the harness needs, and say what to fix",
        description="Checks the C++ compiler and ninja (every build), nvcc against torch's CUDA (the cuda target), "
                    "the visible GPUs, the sandbox every child runs in, the results directory (as eval and run "
                    "open it) and free disk for it and the caches, whether other processes keep the cores busy, "
                    "and, when one is given (--base-url or $OPENAI_BASE_URL), the model server. Exit status 0 "
                    "when nothing failed, "
                    "1 when something the harness needs is missing; 2 for a malformed URL, before anything runs.")
    doctor.add_argument("--base-url", metavar="URL",
                        help="an OpenAI-compatible endpoint to check (default: $OPENAI_BASE_URL; none: not checked)")
    doctor.add_argument("--json", action="store_true", help="one JSON object: status (fail, warn or ok: the worst "
                                                            "check's) and checks (check, status, detail, fix)")
    doctor.set_defaults(func=cmd_doctor)


def cmd_doctor(args) -> int:
    settings = store_settings(config_file=args.config, results_dir=args.results_dir, db_path=args.db)
    base_url = Connection(base_url=args.base_url).server()  # a malformed one: RunError, exit 2, as for `run`
    run = [compiler(), ninja(), *cuda(), sandbox_check(), *results_dir(settings.results_dir, settings.db),
           disk(pch_root(), "disk: pch"), cores(cores_load.measure()), model_server(base_url)]
    checks = [c for c in run if c is not None]
    if args.json:  # one verdict: the worst check's status, and every check
        worst = next((s for s in ("fail", "warn") if any(c.status == s for c in checks)), "ok")
        emit_json({"status": worst, "checks": [{"check": c.name, "status": c.status, "detail": c.detail,
                                                "fix": c.fix} for c in checks]})
    else:
        table = Table(title_justify="left")
        for column in ("check", "status", "detail", "fix"):
            table.add_column(column, overflow="fold")
        for c in checks:
            table.add_row(escape(c.name), f"[{STYLE[c.status]}]{c.status}[/]", escape(c.detail), escape(c.fix))
        out.print(table)
    return 1 if any(c.status == "fail" for c in checks) else 0


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout + done.stderr if done.returncode == 0 else None


def compiler() -> Check:
    text = _run(["c++", "--version"])
    if text is None:
        return Check("C++ compiler", "fail", "no working `c++` on PATH: every build needs one",
                     "install g++ (Debian/Ubuntu: apt install g++)")
    return Check("C++ compiler", "ok", text.splitlines()[0])


def ninja() -> Check:
    text = _run(["ninja", "--version"])
    if text is None:
        return Check("ninja", "fail", "no `ninja` on PATH: torch's load_inline builds with it",
                     "pip install ninja")
    return Check("ninja", "ok", text.strip())


def torch_cuda() -> str | None:
    """The CUDA version torch was built for ("" for a CPU build, None without torch), read from its version.py."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    version_py = Path(spec.origin).parent / "version.py" if spec and spec.origin else None
    if not (version_py and version_py.is_file()):
        return None
    found = re.search(r"^cuda(?:: \S+)? = '([^']+)'", version_py.read_text(), re.M)
    return found.group(1) if found else ""


def nvcc_release() -> str | None:
    text = _run(["nvcc", "--version"]) if shutil.which("nvcc") else None
    return (re.findall(r"release ([\d.]+)", text) or ["unknown"])[0] if text is not None else None


def cuda() -> list[Check]:
    """torch, nvcc and the GPUs: the cuda target needs all three, and torch's CUDA major in nvcc."""
    from harness.device import visible_gpus

    built_for, nvcc, gpus = torch_cuda(), nvcc_release(), visible_gpus()
    if built_for is None:
        return [Check("torch", "fail", "torch is not installed", "pip install torch (on a machine without a GPU: "
                      "pip install torch --index-url https://download.pytorch.org/whl/cpu)")]
    checks = [Check("torch", "ok", f"built for CUDA {built_for}" if built_for else "a CPU build: the cpu target only")]
    if gpus:
        checks.append(Check("GPUs", "ok", ", ".join(f"{g.index}: {g.name} (sm_{g.arch})" for g in gpus)))
    else:
        checks.append(Check("GPUs", "info", "none visible (nvidia-smi): the cpu target only"))
    if not gpus:  # the cuda target cannot run here, whatever nvcc is
        return checks
    if not built_for:
        checks.append(Check("torch's CUDA", "fail", "a GPU is visible but torch is a CPU build",
                            "install a CUDA build of torch (https://pytorch.org/get-started/locally/)"))
    if nvcc is None:
        checks.append(Check("nvcc", "fail", "not on PATH: the cuda target compiles with it",
                            f"install the CUDA toolkit {built_for or ''} and put its bin/ on PATH (or set CUDA_HOME)"))
    elif built_for and nvcc.split(".")[0] != built_for.split(".")[0]:
        checks.append(Check("nvcc", "fail", f"release {nvcc}, but torch was built for CUDA {built_for}: "
                            "load_inline refuses a different major version",
                            f"put a CUDA {built_for.split('.')[0]}.x toolkit's nvcc first on PATH"))
    else:
        checks.append(Check("nvcc", "ok", f"release {nvcc}" + (f" (torch: CUDA {built_for})" if built_for else "")))
    return checks


def sandbox_check() -> Check:
    from harness import sandbox

    reason = sandbox.probe()
    if reason is None:
        return Check("sandbox", "ok", "user, mount, PID and network namespaces work: every child runs sandboxed")
    return Check("sandbox", "fail", reason, "allow unprivileged user namespaces (sysctl "
                 "kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0), or run "
                 "with --sandbox off (children unisolated; every result carries the flag `unsandboxed`)")


def results_dir(path: Path, db: Path) -> list[Check]:
    """The results directory (and the database's, where --db puts it elsewhere) through the check `eval` and `run`
    make (store.prepare_results_dir), then its free space; the folders it made to try are removed again."""
    folders = dict.fromkeys((path, db.parent))
    failed = [problem for folder in folders if (problem := _try_results_dir(folder)) is not None]
    if failed:
        return [Check("results directory", "fail", problem, RESULTS_DIR_FIX) for problem in failed]
    return [disk(path, "results directory")]


def _try_results_dir(path: Path) -> str | None:
    missing = [p for p in (path, *path.parents) if not p.exists()]  # the deepest first: rmdir's order
    try:
        prepare_results_dir(path)
    except StoreError as exc:
        return str(exc).removesuffix(f"; {RESULTS_DIR_FIX}")
    finally:
        for folder in missing:
            with contextlib.suppress(OSError):  # made meanwhile by someone else, or not empty: theirs
                folder.rmdir()
    return None


def cores(load: cores_load.CoresLoad | None) -> Check:
    """Whether other processes keep the cores busy: a result timed under that load is flagged `contended`."""
    if load is None:
        return Check("cores", "info", "cannot tell how busy the cores are (no /proc/stat)")
    detail = f"other processes used {load.foreign:.0%} of {load.cores} core(s) over {load.wall_s:.1f} s"
    if not load.contended:
        return Check("cores", "ok", detail)
    return Check("cores", "warn", f"{detail}: results timed now are flagged `contended` (other processes above "
                 f"{CONTENDED_SHARE:.0%} of the cores' time) and not counted: no speedup, fast_p or geomean from them",
                 "stop the other work, or run where the cores are idle; a contended result is never served "
                 "from the store, so the next evaluation times it again")


def disk(path: Path, check: str) -> Check:
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    free = shutil.disk_usage(existing).free / 1e9
    detail = f"{free:.1f} GB free at {existing}" + ("" if existing == path else f" (for {path})")
    if free < MIN_FREE_GB:
        return Check(check, "warn", detail, f"free some space: builds and precompiled headers "
                     f"need a few GB (`harness cache prune`); under {MIN_FREE_GB:g} GB here")
    return Check(check, "ok", detail)


def model_server(base_url: str | None) -> Check | None:
    """List the server's models (GET /models), the one request any OpenAI-compatible server answers; `base_url`
    is checked well-formed already (Connection.server)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    import base64
    import json
    import urllib.error
    import urllib.request

    key = os.environ.get("OPENAI_API_KEY")
    shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # never print credentials
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if parts.username is not None:  # credentials in the URL (a proxy's): sent as HTTP basic auth
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    request = urllib.request.Request(shown.rstrip("/") + "/models", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read(1 << 20)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return Check("model server", "fail", f"{shown} refused the key (HTTP {exc.code})",
                         "set OPENAI_API_KEY to a key this server accepts")
        return Check("model server", "fail", f"{shown}/models: HTTP {exc.code}",
                     "check that the URL ends at the API root (often /v1)")
    except (OSError, ValueError) as exc:
        return Check("model server", "fail", f"{shown}: {getattr(exc, 'reason', exc)}",
                     "start the server, or check the host and port")
    try:
        models = [m.get("id") for m in json.loads(body).get("data", [])]
    except (ValueError, AttributeError):
        return Check("model server", "fail", f"{shown}/models did not answer a model list",
                     "check that the URL is an OpenAI-compatible API root (often /v1)")
    return Check("model server", "ok", f"{shown}: {len(models)} model(s): {', '.join(map(str, models[:5]))}")
