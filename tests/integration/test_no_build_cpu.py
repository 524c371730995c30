"""An answer with nothing to build (no load_inline or load: Triton, plain PyTorch) goes to its evaluation without a
build child (eval/build.py): its runner imports it first, and an import that fails is the answer's compile_error,
as the build child made it. Real evaluations on the cpu target (Triton's interpreter); any build child started is
a harness_error here, so a test cannot pass by building."""
import pytest

import harness.eval.build
from harness.config import load_settings
from harness.device import discover
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.markers import UNIMPORTED_FILE
from harness.problems.index import resolve
from harness.store import Store
from tests.conftest import FIXTURES, SOLUTIONS

pytest.importorskip("triton")

TRITON_RELU = (SOLUTIONS / "triton" / "cpu" / "relu.py").read_text()
ANSWERS = {
    "triton": TRITON_RELU,
    # a Triton answer whose module fails at import: what a build child reported as its compile_error
    "import_fails": TRITON_RELU.replace("import triton.language as tl", "import triton.language as tl\n"
                                        "from triton.language import no_such_function"),
    # one whose own code raises while it is imported
    "raises": TRITON_RELU.replace("\n\n@triton.jit", "\nraise RuntimeError('configured for another machine')\n\n"
                                  "@triton.jit", 1),
}


def no_build_child(*args, **kwargs):
    raise AssertionError("a build child was started for an answer with nothing to build")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    settings = load_settings(results_dir=tmp_path_factory.mktemp("results"), trials=2, build_workers=1,
                             timing={"budget_s": 0.3})
    problem = resolve(str(FIXTURES / "problems" / "relu.py"))
    jobs = [Job(problem, candidate_from_source(source)) for source in ANSWERS.values()]
    with pytest.MonkeyPatch.context() as patch, Store(settings.db) as store:
        patch.setattr(harness.eval.build, "run_child", no_build_child)
        evaluated = evaluate(jobs, device=discover("cpu"), settings=settings, store=store, run=RunLabel("nb", "eval"))
    return dict(zip(ANSWERS, (result for _, result in evaluated), strict=True))


def test_a_triton_answer_is_evaluated_without_a_build_child(results):
    result = results["triton"]
    assert result.status == "correct", result.error
    assert result.build.status == "ok" and result.build.log == "" and result.build.duration_s < 1
    assert (harness.eval.build.Path(result.build.directory) / UNIMPORTED_FILE).is_file()


@pytest.mark.parametrize("name, says", [("import_fails", "ImportError: cannot import name 'no_such_function'"),
                                        ("raises", "RuntimeError: configured for another machine")])
def test_an_answer_that_fails_to_import_is_a_compile_error_from_its_evaluation(results, name, says):
    result = results[name]
    assert result.status == "compile_error", (result.status, result.error)
    assert "importing the answer failed" in result.error and says in result.error
    assert result.build.status == "ok"  # nothing was built: the evaluation tried the import
