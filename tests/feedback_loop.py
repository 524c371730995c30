"""Feedback a model can act on, through the whole loop: a real local server speaking the OpenAI API answers turn 1
with a build in `__init__` that fails inside try/except (rejected, no kernel ran) and turn 2 with a kernel that skips
the last partial tile (incorrect). What the server receives for turns 2 and 3 must say why: the compiler's error line
in the answer's own line numbers and what the answer printed, then where the output is wrong. A test module of each
target takes these tests into its globals (tests/integration/test_feedback_loop_cpu.py, tests/gpu/...)."""
from __future__ import annotations

from tests.conftest import REPO, SOLUTIONS, run_cli, share_builds
from tests.openai_server import FakeOpenAI, fenced, turn_of

PROBLEM = {"cpu": "cpu/relu", "cuda": str(SOLUTIONS / "problems" / "relu.py")}
LAST = {"cpu": REPO / "solutions" / "reference" / "cpu" / "relu.py", "cuda": SOLUTIONS / "correct" / "cuda_relu.py"}


def feedback_loop_tests(target: str) -> dict:
    import pytest

    answers = {1: SOLUTIONS / "kernel_use" / f"{target}_init_build_fails.py",
               2: SOLUTIONS / "wrong" / f"{target}_relu_skips_tail.py", 3: LAST[target]}

    @pytest.fixture(scope="module")
    def turns(tmp_path_factory):
        """The last user message of each request, by turn."""
        results = share_builds(tmp_path_factory.mktemp("feedback") / "r", tmp_path_factory)
        with FakeOpenAI(lambda body: fenced(answers[turn_of(body)].read_text())) as server:
            proc = run_cli("run", "--target", target, "--problems", PROBLEM[target], "--results-dir", results,
                           "--solutions-dir", results.parent / "solutions", "--base-url", server.base_url,
                           "--model", "scripted", "--turns", "3", "--timing-budget", "1", "--json",
                           env={"OPENAI_API_KEY": "sk-feedback-test"})
            assert proc.returncode == 0, proc.stderr
            return {turn_of(body): body["messages"][-1]["content"] for body in server.answered}

    def test_a_build_that_failed_in_init_is_quoted_with_what_the_answer_printed(turns):
        feedback = turns[2]
        assert "rejected" in feedback and "no_kernel_ran" in feedback, feedback
        assert "in ModelNew.__init__ failed, and your code caught the exception; the compiler said:" in feedback
        (line,) = [i for i, text in enumerate(answers[1].read_text().splitlines(), 1) if "undeclared" in text]
        assert f"(answer line {line}): error" in feedback and "undeclared" in feedback, feedback
        assert "could not build the extension, using PyTorch: RuntimeError" in feedback, feedback

    def test_a_kernel_that_skips_the_tail_is_told_where(turns):
        feedback = turns[3]
        assert "output is wrong" in feedback and "a tail the kernel does not cover" in feedback, feedback

    return {name: value for name, value in locals().items() if name.startswith("test_") or name == "turns"}
