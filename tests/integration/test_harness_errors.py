"""harness_error: a failure of the harness or the machine is never the candidate's verdict. Each test causes
one such fault on purpose (real children, real compiler, real store), and shows that the candidate gets no
verdict for it, that nothing is cached, and that the next evaluation judges it as if nothing had happened."""
from pathlib import Path

import pytest

import harness.eval.build
import harness.eval.children
import harness.eval.verdict
import harness.fastbuild.names
from harness.config import load_settings
from harness.device import discover
from harness.eval.build import BUILD_PROTOCOL, BuildOptions, build
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.fastbuild.maker import seal_pch
from harness.problems.index import resolve
from harness.report.leaderboard import leaderboard
from harness.store import Store
from tests.conftest import FIXTURES
from tests.conftest import LEAN_RELU as CANDIDATE

PROBLEM = FIXTURES / "problems" / "relu.py"

BUILT_IN_INIT_BROKEN = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # built when constructed, not at import: the build child never sees this call
        self.ext = load_inline(name="late_broken", cpp_sources="int f() { return undeclared_name; }",
                               no_implicit_headers=True)

    def forward(self, x):
        return self.ext.relu(x)
'''


@pytest.fixture(scope="module")
def shared_results(tmp_path_factory):
    """One store and build cache for the module (the device's peaks are measured once); each test evaluates
    a candidate of its own (`candidate(test)`), so no test is served another's result."""
    return tmp_path_factory.mktemp("results")


@pytest.fixture
def settings(shared_results):
    return load_settings(results_dir=shared_results, trials=2, build_workers=1, timing={"budget_s": 0.3})


@pytest.fixture
def source(request):
    return CANDIDATE.replace("lean_relu", f"fault_relu_{request.node.name[5:40]}")


def evaluate_sources(settings, sources: list[str], run: str, problem_path: Path = PROBLEM):
    problem = resolve(str(problem_path))
    jobs = [Job(problem, candidate_from_source(source)) for source in sources]
    with Store(settings.db) as store:
        results = [result for _, result in evaluate(jobs, device=discover("cpu"), settings=settings, store=store,
                                                    run=RunLabel(run, "eval"))]
        return results, store.results(run)


def assert_no_verdict_then_judged(settings, faulty: list, source: str, run: str):
    """The fault gave harness_error and cached nothing: the same store judges the candidate next time."""
    assert [r.status for r in faulty] == ["harness_error"], [r.error for r in faulty]
    assert "harness" in faulty[0].error
    with Store(settings.db) as store:
        assert store.find(faulty[0].candidate_sha256, faulty[0].problem_sha256, faulty[0].device_name, "cpu",
                          BUILD_PROTOCOL) is None
    board = leaderboard(run, faulty)
    assert board.summary.harness_errors == 1 and board.summary.candidates == 0
    assert board.summary.compile_rate is None and board.summary.correct_rate is None  # counted in no rate
    again, stored = evaluate_sources(settings, [source], run)
    assert [(r.status, r.cached) for r in again] == [("correct", False)]
    board = leaderboard(run, stored)  # the run holds both rows: the verdict supersedes the fault
    assert board.summary.harness_errors == 0 and board.summary.correct_rate == 1.0


def with_env(original, **extra):
    def patched(*args, **kwargs):
        return {**original(*args, **kwargs), **extra}
    return patched


def test_a_build_child_that_cannot_start_is_a_harness_error(settings, source, monkeypatch):
    broken = with_env(harness.eval.build.build_env, PYTHONHOME="/nonexistent")
    monkeypatch.setattr(harness.eval.build, "build_env", broken)
    faulty, _ = evaluate_sources(settings, [source], "build-child")
    assert faulty[0].build.status == "harness_error"
    monkeypatch.undo()
    assert_no_verdict_then_judged(settings, faulty, source, "build-child")


def test_an_evaluation_child_that_cannot_start_is_a_harness_error(settings, source, monkeypatch):
    broken = with_env(harness.eval.children.eval_env, PYTHONHOME="/nonexistent")
    monkeypatch.setattr(harness.eval.children, "eval_env", broken)
    faulty, _ = evaluate_sources(settings, [source], "eval-child")
    assert faulty[0].build.status == "ok"
    monkeypatch.undo()
    assert_no_verdict_then_judged(settings, faulty, source, "eval-child")


def test_an_exception_in_harness_code_is_that_job_s_harness_error_and_the_run_goes_on(settings, source, monkeypatch):
    calls = []

    def broken_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("a bug in the harness")
        return []
    monkeypatch.setattr(harness.eval.verdict, "plausibility_flags", broken_once)
    other = source.replace("fault_relu", "fault_relu_twin")
    faulty, _ = evaluate_sources(settings, [source, other], "bug")
    assert [r.status for r in faulty] == ["harness_error", "correct"]
    assert "ZeroDivisionError: a bug in the harness" in faulty[0].error
    monkeypatch.undo()
    assert_no_verdict_then_judged(settings, faulty[:1], source, "bug")


def test_an_unusable_build_cache_is_a_harness_error(tmp_path, source):
    settings = load_settings(results_dir=tmp_path, trials=2, build_workers=1, timing={"budget_s": 0.3})
    settings.cache_dir.mkdir(parents=True)
    (settings.cache_dir / "builds").write_text("a file where the build directories should be")
    faulty, _ = evaluate_sources(settings, [source], "cache")
    assert faulty[0].build.status == "harness_error" and "building" in faulty[0].error
    (settings.cache_dir / "builds").unlink()
    assert_no_verdict_then_judged(settings, faulty, source, "cache")


def test_a_problem_that_fails_before_the_candidate_runs_is_not_the_candidate_s_failure(settings, source, tmp_path):
    broken = tmp_path / "relu_broken.py"
    broken.write_text(PROBLEM.read_text() + "\n\ndef _machine():\n    raise MemoryError('the machine')\n\n\n"
                      "def get_init_inputs():\n    return [_machine()]\n")
    faulty, _ = evaluate_sources(settings, [source], "problem", problem_path=broken)
    assert [r.status for r in faulty] == ["harness_error"] and "problem error" in faulty[0].error


def test_a_build_that_fails_in_init_is_the_candidate_s_compile_error(settings):
    # not a fault of ours: the candidate's own build, moved from import to __init__, failed
    (result,), _ = evaluate_sources(settings, [BUILT_IN_INIT_BROKEN], "late")
    assert result.status == "compile_error", result.error
    assert "building an extension failed" in result.error


TORCH_HEADER_CANDIDATE = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = """
torch::Tensor relu(torch::Tensor x) { return torch::clamp_min(x, 0); }
"""
ext = load_inline(name="relu_pch_fault", cpp_sources=CPP, functions=["relu"], extra_cflags=["-O1"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


def test_a_broken_precompiled_header_never_fails_a_build(tmp_path, monkeypatch):
    """A PCH that GCC takes for the header but cannot read (cut short after it was sealed): the build with it fails
    at the header, the build without it succeeds, and the PCH is retired. (One that GCC reads whole is the
    harness's own, made with main.cpp's exact command: an error at the answer's own lines is then the answer's and
    is not built again, fastbuild/blame.py.)"""
    import subprocess

    import torch
    import torch.utils.cpp_extension as cpp_ext

    from harness.fastbuild import pch

    monkeypatch.setenv(harness.fastbuild.names.PCH_DIR_ENV, str(tmp_path / "pch"))
    arguments = {"cpp_sources": "x", "extra_cflags": ["-O1"]}
    header = Path(torch.__file__).parent / "include" / pch.PCH_HEADER
    command = pch._precompile_command(cpp_ext, arguments, header)
    directory = pch.pch_root() / pch._key(command)
    (directory / "torch").mkdir(parents=True)
    impostor = tmp_path / "impostor.h"
    impostor.write_text("int nothing_of_torch;\n")
    subprocess.run([*command[:-1], str(impostor), "-o", str(directory / pch.PCH_FILE)], check=True)
    with open(directory / pch.PCH_FILE, "r+b") as handle:
        handle.truncate((directory / pch.PCH_FILE).stat().st_size // 2)
    (directory / pch.PCH_HEADER).symlink_to(header)
    seal_pch(directory)  # as if the harness had made it: a seal proves who made a PCH, not that it is right

    candidate = candidate_from_source(TORCH_HEADER_CANDIDATE)
    result = build(candidate, discover("cpu"), tmp_path / "cache", BuildOptions(timeout_s=600))
    assert result.status == "ok", result.log[-3000:]
    harness_lines = [line for line in result.log.splitlines() if line.startswith("harness:")]
    assert harness.fastbuild.names.PCH_RETRY in harness_lines, harness_lines
    assert (directory / pch.PCH_FAILED).is_file()
