"""Escapes (tests/fixtures/solutions/escape/, issue 19): candidates for a ReLU problem that compute ReLU correctly
and also attack the machine from the build child or the evaluation child; on cpu (cpu/relu, in CI) and on cuda
(the CUDA corpus's ReLU, `pytest -m gpu`). The Python escapes (py_*) serve both targets; the C++ ones have a twin
per target (cpu_*, cuda_*). Each is evaluated twice, from fresh state each time (a results dir of its own, a copy
of the problems dir, $HARNESS_PCH_DIR in tmp, a planted secret, a TCP listener on 127.0.0.1):

  sandbox off  the harm happens: the escape fools the unsandboxed harness (skipped for site-packages alone,
               which would write into the real environment); it checks the fixture, so it runs in the slow tier
               (`pytest -m slow`, due when an escape or the harm checks change);
  sandbox on   the harm does not happen, the escape's own verdict is its header's `sandboxed:`, and an honest
               ReLU evaluated right after it in the same results dir gets the verdict it gets with no attack
               before it.

Every escape is inert unless ESCAPE_MARKER is set (the test sets a fresh one per evaluation); whatever it leaves
(a daemon, files in site-packages or the harness package, children orphaned by a killed harness) is found by that
marker and removed in the finalizer. Escapes whose harm needs a real harness process (its environment, its life)
run through `harness eval` in a subprocess, never in pytest's own process.

Speed: the results store of one clean evaluation (the device's peaks and the problem's eager baseline, ~30 s to
measure on cpu) is copied into every fresh results dir, and the Python escapes and the honest ReLU are `torch.relu`
beside a token Triton kernel (no C++ build; it runs in Triton's interpreter, and without a kernel of their own
the runtime would reject them as no_kernel_ran), evaluated with the static rules off: correct, flagged
low_coverage and interpreted, flags these tests do not check (on a GPU, Triton compiles it). The two C++ escapes
are raw-pointer kernels without torch headers (a ~8 s build each on cpu), evaluated with the rules on, which they
pass. A test module takes one target's fixtures and tests into its globals (`escape_tests`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import signal
import site
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import harness
from harness.api import Evaluator
from harness.config import load_settings
from harness.device import discover
from harness.eval.build import torch_version
from harness.eval.cpu_ceiling import contended
from harness.eval.rules import check as check_rules
from harness.sandbox import probe
from harness.store import Store
from harness.types import EvalResult
from tests.conftest import REPO, SOLUTIONS, json_lines, run_cli

ESCAPES = SOLUTIONS / "escape"
HEADER = re.compile(r"^# (escape|problem|harm|sandboxed|language|child|rules): (.+)$", re.MULTILINE)
HONEST = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_head(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets), 0.0))


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        relu_head[(1,)](x, y, BLOCK=256)
        return y
'''
TRIALS = 1  # one trial catches every harm here; the honest ReLU is exact
TIMING = {"budget_s": 0.2, "min_runs": 3, "warmup_runs": 1}
EVAL_TIMEOUT_S = 120
# Their harm needs a harness process of its own: its initial environment (/proc/<ppid>/environ shows the
# environment a process started with, not what pytest set since) and its life.
VIA_CLI = {"leak-parent-env", "kill-parent"}
ONLY_SANDBOXED = {"site-packages"}  # without a sandbox it would write into the real environment


@dataclass(frozen=True)
class Case:
    """One target's problem: its id in a fresh problems dir, and the file copied there."""
    target: str
    problem: str
    source: Path

    @property
    def file(self) -> str:
        return f"{self.problem}.py"


CASES = {"cpu": Case("cpu", "cpu/relu", REPO / "problems" / "cpu" / "relu.py"),
         "cuda": Case("cuda", "gpu/relu", SOLUTIONS / "problems" / "relu.py")}


@dataclass(frozen=True)
class Escape:
    path: Path
    name: str
    problem: str
    harm: str
    sandboxed: str
    language: str
    child: str
    rules: bool  # evaluated with the static rules on (and passing them); off: torch.relu and a token Triton kernel

    @property
    def via(self) -> str:
        return "cli" if self.name in VIA_CLI else "api"


def escapes(target: str) -> list[Escape]:
    found = []
    for path in sorted([*ESCAPES.glob("py_*.py"), *ESCAPES.glob(f"{target}_*.py")], key=lambda p: p.name):
        f = dict(HEADER.findall(path.read_text()))
        found.append(Escape(path, f["escape"], f["problem"], f["harm"], f["sandboxed"], f["language"], f["child"],
                            f["rules"] == "on"))
    return found



# ---- the machinery: a listener, marked processes and files, fresh state ----

class Listener:
    """A TCP server on 127.0.0.1 that keeps whatever is sent to it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.data = bytearray()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, name="escape-listener", daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stop.is_set():
            self.accept_one()

    def accept_one(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except (TimeoutError, OSError):
            return False
        with conn:
            conn.settimeout(5)
            try:
                while chunk := conn.recv(65536):
                    self.data += chunk
            except OSError:
                pass
        return True

    def received(self) -> bytes:
        """Everything sent, connections still waiting in the backlog included; it listens no more."""
        self.stop.set()
        self.thread.join()
        while self.accept_one():
            pass
        return bytes(self.data)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def marked_processes(needle: bytes, *, in_environ: bool = False) -> list[int]:
    """Live processes (not zombies) whose command line (or environment) holds `needle`; never this one."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            if stat[stat.rindex(b")") + 2:][:1] == b"Z":
                continue
            text = (entry / "cmdline").read_bytes() + (b"\0" + (entry / "environ").read_bytes() if in_environ else b"")
        except (OSError, ValueError):
            continue
        if needle in text:
            pids.append(int(entry.name))
    return pids


def kill_marked(marker: str) -> None:
    """What an escape left behind: its daemon, children a killed harness orphaned (they carry the marker)."""
    for pid in marked_processes(marker.encode(), in_environ=True):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def daemons(marker: str, grace_s: float) -> list[int]:
    """The escape's daemons still alive, after waiting up to grace_s for them to be gone (a sandbox's teardown)."""
    deadline = time.monotonic() + grace_s
    while (alive := marked_processes(f"escape-daemon-{marker}".encode())) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


def package_places() -> list[Path]:
    """Where an escape could plant files that every later process reads: site-packages, the harness package."""
    torch_spec = importlib.util.find_spec("torch")
    places = {Path(p) for p in site.getsitepackages()} | {Path(harness.__file__).resolve().parent}
    if torch_spec and torch_spec.origin:
        places.add(Path(torch_spec.origin).resolve().parent.parent)
    return sorted(places)


def planted_in_packages(marker: str) -> list[Path]:
    return [p for place in package_places() for p in place.glob(f"escape-planted-{marker}*")]


def copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a WAL-mode SQLite store."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def fresh_problems(case: Case, root: Path) -> Path:
    (root / case.file).parent.mkdir(parents=True)
    shutil.copyfile(case.source, root / case.file)
    return root


def evaluator(case: Case, results: Path, problems: Path, mode: str, *, force: bool = False,
              rules: bool = False) -> Evaluator:
    settings = load_settings(results_dir=results, problems_dir=problems, sandbox=mode, static_rules=rules,
                             trials=TRIALS, build_workers=2, eval_timeout_s=EVAL_TIMEOUT_S, build_timeout_s=300,
                             force=force or None, timing=TIMING)
    return Evaluator(target=case.target, settings=settings, problems_dir=problems)


@dataclass
class Template:
    """A results store holding the device's peaks and the problem's clean baseline, and the honest ReLU's verdict
    with no attack before it, per sandbox mode."""
    case: Case
    db: Path
    root: Path
    clean: dict[str, str] = field(default_factory=dict)

    def clean_status(self, mode: str) -> str:
        if mode not in self.clean:
            results = self.root / f"clean-{mode}"
            results.mkdir()
            copy_store(self.db, results / "harness.db")
            problems = fresh_problems(self.case, self.root / f"problems-{mode}")
            [result] = evaluator(self.case, results, problems, mode, force=True).evaluate([(self.case.problem, HONEST)])
            self.clean[mode] = result.status
        return self.clean[mode]


def make_template(case: Case, root: Path) -> Template:
    results = root / "results"
    problems = fresh_problems(case, root / "problems")
    [result] = evaluator(case, results, problems, "off").evaluate([(case.problem, HONEST)])
    assert result.status == "correct", result.error
    if case.target == "cpu":
        settle_peaks(results / "harness.db")
    return Template(case=case, db=results / "harness.db", root=root, clean={"off": result.status})


def settle_peaks(db: Path) -> None:
    """On a busy machine every peaks measurement is contended, and each evaluation measures the copy again
    (~5 s): the template's peaks are stamped uncontended. They feed only flags, which these tests do not check."""
    device = discover("cpu")
    with Store(db) as store:
        peaks = store.peaks(device.name, device.target, torch_version())
        if peaks is not None and contended(peaks):
            store.add_peaks(device.name, device.target, torch_version(), peaks.model_copy(update={"foreign_cpu": 0.0}))


@dataclass
class State:
    """One evaluation of one escape, from fresh state, and what came of it."""
    case: Case
    mode: str
    results: Path
    problems: Path
    pch: Path
    marker: str
    secret: str
    listener: Listener
    escape_status: str | None = None  # None: no verdict came back (the harness died)
    escape_flags: tuple[str, ...] = ()
    escape_result: EvalResult | None = None
    honest: list[EvalResult] = field(default_factory=list)  # honest verdicts after the escape, in order
    cli_returncode: int | None = None
    cli_stderr: str = ""


def make_state(request, tmp_path, template: Template, monkeypatch):
    mode = request.node.callspec.params["mode"]
    marker = f"{mode}{uuid.uuid4().hex[:12]}"
    results = tmp_path / "results"
    results.mkdir()
    copy_store(template.db, results / "harness.db")
    pch = tmp_path / "pch"
    (pch / "0123456789abcdef0123456789abcdef" / "torch").mkdir(parents=True)  # a stand-in for a PCH's key directory
    listener = Listener()
    problems = fresh_problems(template.case, tmp_path / "problems")
    s = State(case=template.case, mode=mode, results=results, problems=problems, pch=pch, marker=marker,
              secret=f"sk-escape-planted-{uuid.uuid4().hex}", listener=listener)
    for name, value in {"ESCAPE_MARKER": marker, "ESCAPE_PORT": str(listener.port), "HARNESS_PCH_DIR": str(pch),
                        "HARNESS_PROBLEMS_DIR": str(s.problems), "OPENAI_API_KEY": s.secret,
                        "HARNESS_TIMING_MIN_RUNS": str(TIMING["min_runs"]),
                        "HARNESS_TIMING_WARMUP_RUNS": str(TIMING["warmup_runs"])}.items():
        monkeypatch.setenv(name, value)
    try:
        yield s
    finally:
        listener.close()
        kill_marked(marker)
        for planted in planted_in_packages(marker):
            planted.unlink(missing_ok=True)


# ---- what each escape's harm looks like ----

def honest_verdicts(s: State) -> list[str]:
    return [f"an honest ReLU evaluated after it was {r.status}: {(r.error or '')[:200]}"
            for r in s.honest if r.status != "correct"]


def problem_rewritten(s: State) -> list[str]:
    changed = (s.problems / s.case.file).read_text() != s.case.source.read_text()
    return ["the problem file was rewritten"] * changed + honest_verdicts(s)


def build_dirs_planted(s: State) -> list[str]:
    found = [f"planted {p.relative_to(s.results)}" for p in s.results.rglob("escape-planted-*")]
    for r in s.honest:
        if r.build and r.build.directory and (Path(r.build.directory) / "candidate.py").is_file():
            if (Path(r.build.directory) / "candidate.py").read_text() != HONEST:
                found.append(f"the honest candidate's {Path(r.build.directory).name}/candidate.py was rewritten")
    return found + honest_verdicts(s)


def pch_planted(s: State) -> list[str]:
    return [f"planted {p.relative_to(s.pch)}" for p in s.pch.rglob("escape-planted-*")]


def store_tampered(s: State) -> list[str]:
    db = sqlite3.connect(f"file:{s.results / 'harness.db'}?mode=ro", uri=True)
    try:
        triggers = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
        flipped = db.execute("SELECT COUNT(*) FROM evaluations WHERE candidate_sha256 = ? AND status != 'correct'",
                             (hashlib.sha256(HONEST.encode()).hexdigest(),)).fetchone()[0]
    finally:
        db.close()
    return [f"a trigger in the store: {name}" for name in triggers] + \
        [f"{flipped} stored verdict(s) of the honest ReLU turned incorrect"] * bool(flipped) + honest_verdicts(s)


def daemon_left(s: State) -> list[str]:
    alive = daemons(s.marker, grace_s=0.0 if s.mode == "off" else 10.0)
    return [f"daemon pid {pid} outlived the evaluation" for pid in alive]


def env_leaked(s: State) -> list[str]:
    return ["the harness's OPENAI_API_KEY reached the listener"] * (s.secret.encode() in s.listener.received())


def parent_killed(s: State) -> list[str]:
    return [f"the harness process was killed (exit status {s.cli_returncode})"] * \
        (s.cli_returncode == -signal.SIGKILL)


def packages_planted(s: State) -> list[str]:
    return [f"planted {p}" for p in planted_in_packages(s.marker)]


HARM = {"problem-rewrite": problem_rewritten, "build-dir-plant": build_dirs_planted, "pch-plant": pch_planted,
        "store-tamper": store_tampered, "daemon": daemon_left, "leak-parent-env": env_leaked,
        "kill-parent": parent_killed, "site-packages": packages_planted}


# ---- the evaluations ----

def attack(escape: Escape, s: State) -> None:
    """Evaluate the escape and, right after it in the same results dir, the honest ReLU: in the same batch (the
    same run) where the rules allow, else in a call of its own; after `harness eval` only with the sandbox on
    (without it the harm is the point, and kill-parent leaves no run to follow)."""
    case = s.case
    if escape.via == "cli":
        proc = run_cli("eval", "--json", "--target", case.target, "--problem", case.problem,
                       "--problems-dir", s.problems, "--results-dir", s.results, "--trials", TRIALS,
                       "--timing-budget", TIMING["budget_s"], "--build-workers", 2,
                       "--eval-timeout", EVAL_TIMEOUT_S, "--sandbox", s.mode, escape.path,
                       env={"OPENAI_API_KEY": s.secret}, timeout=600)
        s.cli_returncode, s.cli_stderr = proc.returncode, proc.stderr[-3000:]
        rows = json_lines(proc.stdout) if proc.returncode == 0 else []
        s.escape_status = rows[0]["status"] if rows else None
        s.escape_flags = tuple(rows[0]["flags"]) if rows else ()
        if s.mode == "on":  # the honest ReLU right after it, in the same results dir
            s.honest += evaluator(case, s.results, s.problems, s.mode, force=True).evaluate([(case.problem, HONEST)])
        return
    pairs = [(case.problem, escape.path.read_text())] + ([] if escape.rules else [(case.problem, HONEST)])
    results = evaluator(case, s.results, s.problems, s.mode, force=True, rules=escape.rules).evaluate(pairs)
    s.escape_result, s.escape_status, s.escape_flags = results[0], results[0].status, results[0].flags
    s.honest += results[1:]  # built beside it, evaluated right after it: the same run
    if escape.rules:
        s.honest += evaluator(case, s.results, s.problems, s.mode, force=True).evaluate([(case.problem, HONEST)])


def build_logs(s: State) -> str:
    """What the build children printed (each escape says there what it did, or what stopped it)."""
    texts = [p.read_text(errors="replace") for p in s.results.rglob("build.log")]
    if s.escape_result is not None and s.escape_result.build is not None:
        texts.append(s.escape_result.build.log)
    return "\n".join(texts)


def describe(s: State) -> str:
    what = f"escape: {s.escape_status}"
    if s.escape_result is not None and s.escape_result.error:
        what += f" ({s.escape_result.error[:300]})"
    if s.cli_returncode not in (None, 0):
        what += f"; harness eval exited {s.cli_returncode}: {s.cli_stderr[-1500:]}"
    return what


def check_escape(escape: Escape, mode: str, state: State, template: Template):
    if mode == "off" and escape.name in ONLY_SANDBOXED:
        pytest.skip("without a sandbox this escape would write into the real environment")
    if mode == "on" and (reason := probe()) is not None:
        pytest.skip(f"the sandbox does not work on this machine: {reason}")
    attack(escape, state)
    harm = HARM[escape.name](state)
    if mode == "off":
        assert harm, f"{escape.name} did no harm without the sandbox ({escape.harm}); {describe(state)}"
        if escape.name != "kill-parent":  # that one leaves no verdict: the harness died
            assert state.escape_status == "correct", f"it did not fool the unsandboxed harness: {describe(state)}"
            assert "unsandboxed" in state.escape_flags, describe(state)  # the choice is carried by the result
        return
    assert not harm, f"{escape.name} did harm with the sandbox on: {harm}; {describe(state)}"
    assert state.escape_status == escape.sandboxed, describe(state)
    assert "unsandboxed" not in state.escape_flags, describe(state)
    if escape.child.startswith("build"):  # it did try, from inside the sandbox, and was stopped
        assert f"escape {escape.name}: blocked" in build_logs(state), build_logs(state)[-3000:]
    assert state.honest, "no honest ReLU was evaluated after the escape"
    clean = template.clean_status(mode)
    assert [r.status for r in state.honest] == [clean] * len(state.honest), \
        f"honest verdicts after {escape.name}: {[(r.status, r.error) for r in state.honest]}; with no attack: {clean}"


def check_headers(found: list[Escape], target: str) -> None:
    """Every escape says what it is, has a harm check, and passes the static rules: they cannot see these attacks
    (a Python one is evaluated with them off, as its header says, which changes nothing but its flags)."""
    assert {e.name for e in found} == set(HARM), "every escape needs a harm check, and every check an escape"
    native = "c++" if target == "cpu" else "cuda"
    assert sum(e.rules and e.language == native for e in found) >= 2, f"at least two full {native} answers"
    for e in found:
        assert e.problem.startswith("relu") or e.problem == CASES[target].problem, e.path
        assert e.language in ("python", native) and e.sandboxed and e.harm and e.child, e.path
        rejected = {f.rule for f in check_rules(e.path.read_text()).rejections}
        assert rejected == set(), f"{e.path.name}: {rejected}"


def escape_tests(target: str) -> dict:
    """One target's fixtures and tests; a test module takes them into its globals."""
    found, case = escapes(target), CASES[target]

    @pytest.fixture(scope="module")
    def template(tmp_path_factory) -> Template:
        return make_template(case, tmp_path_factory.mktemp(f"escape-template-{target}"))

    @pytest.fixture
    def state(request, tmp_path, template, monkeypatch):
        yield from make_state(request, tmp_path, template, monkeypatch)

    # Off shows the fixture's attack is real (the harm checks see it), a property of the fixture: the slow tier.
    @pytest.mark.parametrize("mode", [pytest.param("off", marks=pytest.mark.slow), "on"])
    @pytest.mark.parametrize("escape", found, ids=[e.name for e in found])
    def test_escape(escape: Escape, mode: str, state: State, template: Template):
        check_escape(escape, mode, state, template)

    def test_escape_headers_and_static_rules():
        check_headers(found, target)

    return {"template": template, "state": state, "test_escape": test_escape,
            "test_escape_headers_and_static_rules": test_escape_headers_and_static_rules}
