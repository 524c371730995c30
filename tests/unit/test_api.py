"""The public surface: the names `import harness` gives, and the library `run` (the main job as a call) up to
the point where it would ask a model or build anything."""
import subprocess
import sys

import pytest

import harness
from harness import Connection, RunError, RunRequest, Settings, run
from harness.config import load_settings
from tests.conftest import REPO

SURFACE = {"Candidate", "CandidateError", "Connection", "EvalResult", "Evaluator", "Problem", "ProblemError",
           "RunError", "RunRequest", "Settings", "SettingsError", "Status", "run"}


def test_the_package_exports_its_vocabulary_and_nothing_else():
    assert set(harness.__all__) == SURFACE
    for name in SURFACE:
        assert getattr(harness, name) is not None
    errors = [harness.CandidateError, harness.ProblemError, harness.RunError, harness.SettingsError]
    assert all(issubclass(e, ValueError) for e in errors)  # bad input: the CLI's exit status 2


@pytest.fixture
def settings(tmp_path) -> Settings:
    return load_settings(results_dir=tmp_path / "results", solutions_dir=tmp_path / "solutions")


def test_generate_offline_answers_with_the_reference_solution(settings):
    done = run(RunRequest(problems="cpu/relu", name="lib"), target="cpu", settings=settings, mode="generate")
    assert done.name == "lib" and done.config.model.startswith("offline") and done.board is None
    [outcome] = done.outcomes
    assert outcome.problem.id == "cpu/relu" and outcome.candidate is not None
    # the offline answers are files already: the candidate is the reference solution itself, nothing is copied
    assert outcome.candidate.source == (REPO / "solutions/reference/cpu/relu.py").read_text()
    assert not settings.solutions_dir.exists() and done.usage.requests == 1


def test_a_run_that_cannot_start_raises_run_error_before_asking(settings, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(RunError, match="nothing to resume"):
        run(RunRequest(resume=True), target="cpu", settings=settings)
    with pytest.raises(RunError, match="drop model"):
        run(RunRequest(resume=True, model="m"), target="cpu", settings=settings)
    with pytest.raises(RunError, match="bad run name"):
        run(RunRequest(name="../up"), target="cpu", settings=settings)
    with pytest.raises(RunError, match="OPENAI_API_KEY is not set"):
        run(RunRequest(model="gpt-x", problems="cpu/relu"), target="cpu", settings=settings)
    # a local server needs no key: the run gets as far as asking it (nothing listens on port 9)
    assert Connection(base_url="http://127.0.0.1:9/v1").server() == "http://127.0.0.1:9/v1"


def test_a_stored_run_is_continued_only_with_its_own_settings(settings):
    run(RunRequest(problems="cpu/relu", name="same"), target="cpu", settings=settings, mode="generate")
    with pytest.raises(RunError, match="other settings"):
        run(RunRequest(problems="cpu/relu", name="same", prompts_dir=str(REPO / "prompts")), target="cpu",
            settings=settings, mode="generate")
    again = run(RunRequest(name="same", resume=True), target="cpu", settings=settings, mode="generate")
    assert again.config.problems == "cpu/relu" and again.outcomes[0].candidate.path == "solutions/reference/cpu/relu.py"


def test_the_backend_is_part_of_a_run(settings):
    with pytest.raises(RunError, match="reference solution in solutions/reference/triton/"):
        run(RunRequest(problems="cpu/relu", backend="triton"), target="cpu", settings=settings, mode="generate")
    run(RunRequest(problems="cpu/relu", name="cuda-run"), target="cpu", settings=settings, mode="generate")
    with pytest.raises(RunError, match="other settings .*backend"):
        run(RunRequest(problems="cpu/relu", name="cuda-run", model="m", backend="triton"), target="cpu",
            settings=settings, connection=Connection(base_url="http://127.0.0.1:9/v1"), mode="generate")


def test_every_triton_reference_solution_answers_a_problem_and_passes_the_static_rules():
    from harness.eval.rules import check
    from harness.problems.index import resolve

    triton = REPO / "solutions" / "reference" / "triton"
    files = sorted(triton.rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        problem_id = path.relative_to(triton).with_suffix("").as_posix()
        assert resolve(problem_id, REPO / "problems").id == problem_id
        source = path.read_text()
        assert "@triton.jit" in source and not check(source).findings, path


@pytest.mark.parametrize("module", ["harness.child.evaluate", "harness.child.runner", "harness.cli.main"])
def test_children_and_commands_do_not_import_the_model_client(module):
    """Every child process and command imports this package first; the model client's import (~2 s of CPU) belongs
    to the commands that ask a model, not to each judge, runner and build."""
    code = f"import sys, {module}; print(sorted(m for m in ('openai', 'harness.api') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]"] if module.startswith("harness.child") else "openai" not in proc.stdout
