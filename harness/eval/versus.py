"""`harness bench --versus kernelbench`: KernelBench's own evaluation pipeline on the harness's candidates, timed.

As its scripts/eval_from_generations.py runs it: every candidate compiled first on a pool of CPU processes that each
import KernelBench once (build_compile_cache, a build directory per candidate), then evaluated one at a time on one
GPU, each in a fresh process (eval_kernel_against_ref, in that build directory). A checkout's own functions do the
work, in child processes (versus_child.py; the parent never imports torch)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import select
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from harness.eval.versus_child import COMPILE, EVALUATE
from harness.process import child_env, kill_session, read_log, spawn, tail, track

# Where a checkout keeps its eval module: the current layout (a package), then the older one (src/ as a package).
LAYOUTS = (("src/kernelbench/eval.py", "src", "kernelbench.eval"), ("src/eval.py", ".", "src.eval"))
SHIM = "shim"  # DIR/shim, searched last: stand-ins for packages KernelBench imports but this pipeline never calls
SERVE = "from harness.eval.versus_child import serve; serve()"


class KernelBenchError(HarnessError):
    """No KernelBench checkout where one was named, or its eval module does not import."""


@dataclass(frozen=True)
class Checkout:
    directory: Path
    root: Path  # put first on sys.path to import `module`
    module: str
    identity: dict  # which KernelBench this is (_identify): what a ratio was measured against


def _identify(directory: Path, package: Path, module: str) -> dict:
    """Its package's modules (eval, timing, utils: the pipeline that runs) by hash, and where the checkout is a git
    repository of its own, the commit (a folder inside another repository has none)."""
    digest = hashlib.sha256()
    for source in sorted(package.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return {"directory": str(directory), "module": module, "package_sha256": digest.hexdigest()[:16],
            "commit": _commit(directory)}


def _commit(directory: Path) -> str | None:
    try:
        found = subprocess.run(["git", "-C", str(directory), "rev-parse", "--show-toplevel", "HEAD"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = found.stdout.split()
    if found.returncode or len(lines) != 2 or Path(lines[0]).resolve() != directory:
        return None
    return lines[1]


@dataclass
class Candidate:
    """One candidate through KernelBench's pipeline: its compile step, then its evaluation's verdict."""

    built: bool = False  # build_compile_cache's verdict
    build_error: str | None = None
    judged: bool = False  # eval_kernel_against_ref returned a result; else `error` says why not
    compiled: bool = False
    correct: bool = False
    runtime: float | None = None  # mean of its timed calls, in KernelBench's unit (ms)
    ref_runtime: float | None = None
    compile_s: float = 0.0
    eval_s: float = 0.0
    error: str | None = None

    @property
    def status(self) -> str:
        return "failed" if not self.judged else "correct" if self.correct else "incorrect" if self.compiled \
            else "compile_error"


@dataclass
class KernelBenchRun:
    """KernelBench's pipeline over one batch, with what the bench report reads of a Measurement."""

    shape: str
    wall_s: float
    compile_s: float  # the compile step's wall time
    evaluate_s: float  # the evaluations', one after another
    results: list[Candidate] = field(default_factory=list)
    correct: int = 0  # KernelBench's verdicts: correct, and compiled
    compiled: int = 0
    kernelbench: dict | None = None  # Checkout.identity: what ran
    mode: str = "kernelbench"
    devices: int = 1
    busy: float | None = None  # unknown: its evaluations do not report their parts
    overhead: float | None = None

    @property
    def per_min(self) -> float:
        return 60.0 * len(self.results) / self.wall_s if self.wall_s > 0 else 0.0

    def summary(self) -> dict:
        statuses = dict(Counter(r.status for r in self.results))
        mean = {name: round(statistics.fmean(getattr(r, f"{name}_s") for r in self.results), 3) if self.results
                else None for name in ("compile", "eval")}
        return {"mode": self.mode, "shape": self.shape, "devices": self.devices, "candidates": len(self.results),
                "wall_s": round(self.wall_s, 2), "per_min": round(self.per_min, 2), "statuses": statuses,
                "correct": self.correct, "compiled": self.compiled, "built": sum(r.built for r in self.results),
                "phases_s": {"compile": round(self.compile_s, 2), "evaluate": round(self.evaluate_s, 2)},
                "stages_s": {"build": mean["compile"], "eval": mean["eval"]}, "device_busy": None, "overhead_s": None,
                "kernelbench": self.kernelbench}


def locate(directory) -> Checkout:
    """The checkout's eval module, by path; a directory without one is not a KernelBench checkout."""
    directory = Path(directory).expanduser().resolve()
    for path, root, module in LAYOUTS:
        if (directory / path).is_file():
            return Checkout(directory, (directory / root).resolve(), module,
                            _identify(directory, (directory / path).parent, module))
    looked = " or ".join(path for path, _, _ in LAYOUTS)
    raise KernelBenchError(f"{directory} is not a KernelBench checkout: no eval module ({looked}) under it")


def probe(checkout: Checkout, timeout_s: float = 300) -> dict[str, list[str]]:
    """Import the eval module in a child: the parameters of its compile and eval functions, or why not."""
    with contextlib.closing(_Child(checkout, child_env(), Path("/dev/null"))) as child:
        answer = child.ask({"op": "probe"}, timeout_s)
    if "functions" not in answer:
        raise KernelBenchError(f"{answer.get('error')} (a package it imports but this pipeline never calls can be "
                               f"an empty module in {checkout.directory / SHIM})")
    missing = [name for name in (COMPILE, EVALUATE) if name not in answer["functions"]]
    if missing:
        raise KernelBenchError(f"{checkout.module} in {checkout.root} has no {' or '.join(missing)}")
    return answer["functions"]


def run(checkout: Checkout, problem_file, sources: list[str], build_workers: int, timeout_s: float, scratch, *,
        shape: str = "", backend: str = "cuda", arch: str | None = None,
        progress: Callable[[str], None] = lambda line: None) -> KernelBenchRun:
    """The pipeline on `sources` against the problem file (its original_model_src); `arch` sets TORCH_CUDA_ARCH_LIST
    as its gpu_arch setting would. A candidate's failure is its own result. `progress` is told of the compile step
    and of each evaluation as they end (a run cut short still says how far it got)."""
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    env = child_env({"TRITON_CACHE_DIR": str(scratch / "triton"), **({"TORCH_CUDA_ARCH_LIST": arch} if arch else {})})
    reference = Path(problem_file).read_text()
    dirs = [str(scratch / f"build-{i}") for i in range(len(sources))]  # its kernel_eval_build_dir/run/problem/sample
    results = [Candidate() for _ in sources]
    start = time.monotonic()
    _compile_all(checkout, env, scratch, [{"op": "compile", "source": s, "build_dir": d} for s, d in
                                          zip(sources, dirs)], results, build_workers, timeout_s)
    compiled = time.monotonic()
    progress(f"compile step {compiled - start:.1f} s, {sum(r.built for r in results)} of {len(results)} built")
    for i, (source, result) in enumerate(zip(sources, results)):
        with contextlib.closing(_Child(checkout, env, scratch / f"eval-{i}.log", scratch)) as child:
            answer = child.ask({"op": "evaluate", "reference": reference, "source": source, "build_dir": dirs[i],
                                "backend": backend}, timeout_s)
        result.eval_s = child.seconds
        for key in ("judged", "compiled", "correct", "runtime", "ref_runtime", "error"):
            setattr(result, key, answer.get(key, getattr(result, key)))
        progress(f"{i + 1} of {len(results)} evaluated ({result.status}, {result.eval_s:.1f} s), "
                 f"{time.monotonic() - start:.1f} s in")
    end = time.monotonic()
    return KernelBenchRun(shape, end - start, compiled - start, end - compiled, results,
                          sum(r.correct for r in results), sum(r.compiled for r in results), checkout.identity)


def _compile_all(checkout, env, scratch: Path, requests: list[dict], results: list[Candidate], workers: int,
                 timeout_s: float) -> None:
    """Its compile step: `workers` processes, each compiling candidate after candidate (a process pool that keeps
    its workers); one that dies or hangs fails its candidate and is replaced."""
    own, children, numbers = threading.local(), [], itertools.count()

    def compile_one(i: int) -> None:
        if getattr(own, "child", None) is None or own.child.proc.poll() is not None:
            own.child = _Child(checkout, env, scratch / f"compile-{next(numbers)}.log", scratch)
            children.append(own.child)
        answer = own.child.ask(requests[i], timeout_s)
        results[i].built, results[i].build_error = bool(answer.get("built")), answer.get("error")
        results[i].compile_s = own.child.seconds

    pool = ThreadPoolExecutor(max(1, workers))
    try:
        list(pool.map(compile_one, range(len(requests))))
    finally:  # on Ctrl-C too: no compile waited for, none started
        pool.shutdown(wait=False, cancel_futures=True)
        for child in list(children):
            child.close()


class _Child:
    """A versus_child process: one JSON request a line on stdin, one JSON answer a line on stdout; what KernelBench,
    the compiler and the candidate print goes to `log`. Closing kills its process group (as its pools do)."""

    def __init__(self, checkout: Checkout, env: dict[str, str], log: Path, cwd: Path | None = None):
        self.log, self.seconds = log, 0.0
        self.stack = contextlib.ExitStack()
        sink = self.stack.enter_context(open(log, "ab"))
        self.proc = self.stack.enter_context(track(spawn(
            [sys.executable, "-c", SERVE, str(checkout.root), checkout.module, str(checkout.directory / SHIM)],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink, cwd=cwd)))

    def ask(self, request: dict, timeout_s: float) -> dict:
        start, line, expired = time.monotonic(), b"", False
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            expired = not select.select([self.proc.stdout], [], [], timeout_s)[0]
            line = b"" if expired else self.proc.stdout.readline()
        except OSError:  # it died before reading
            pass
        self.seconds = time.monotonic() - start
        if line:
            return json.loads(line)
        kill_session(self.proc.pid)
        why = f"killed after the {timeout_s:.0f} s timeout" if expired else f"exited with status {self.proc.wait()}"
        seen = tail(read_log(self.log), 5) if self.log.is_file() else ""
        return {"error": f"KernelBench's child {why}" + (f": {seen}" if seen else "")}

    def close(self) -> None:
        self.stack.close()
