"""harness.rl as RL frameworks call it: the prompt `harness run` sends, TRL's reward-function call and verl's
compute_score, over real evaluations (Triton's interpreter on cpu/relu: no compiler in the way)."""
import json

import pytest

from harness import Evaluator, rl
from harness.config import load_settings
from harness.types import EvalResult
from tests.conftest import REPO, run_cli, share_builds
from tests.openai_server import FakeOpenAI, fenced

RELU = (REPO / "tests" / "fixtures" / "solutions" / "triton" / "cpu" / "relu.py").read_text()
WRONG = RELU.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.0) + 0.5")
assert WRONG != RELU


def test_render_prompt_is_what_harness_run_sends(tmp_path):
    with FakeOpenAI(lambda body: "no code here") as server:
        proc = run_cli("run", "--target", "cpu", "--model", "m", "--base-url", server.base_url, "--problems",
                       "cpu/relu", "--backend", "triton", "--results-dir", tmp_path, "--json",
                       env={"OPENAI_API_KEY": "k"})
        assert proc.returncode == 0, proc.stderr
        proc = run_cli("run", "--target", "cpu", "--model", "m", "--base-url", server.base_url, "--problems",
                       "cpu/relu", "--results-dir", tmp_path, "--json", "--dtype", "fp16", env={"OPENAI_API_KEY": "k"})
        assert proc.returncode == 0, proc.stderr
        sent, sent_half = (body["messages"] for body in server.received)
    assert rl.render_prompt("cpu/relu", target="cpu", backend="triton") == sent
    assert rl.render_prompt("cpu/relu", target="cpu") != sent  # the load_inline prompt is another
    assert rl.render_prompt("cpu/relu", target="cpu", dtype="float16") == sent_half


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    results = share_builds(tmp_path_factory.mktemp("rl"), tmp_path_factory)
    settings = load_settings(results_dir=results, timing={"budget_s": 0.5}, trials=2)
    return Evaluator(target="cpu", settings=settings, run="rl")


def test_grpo_reward_as_trl_calls_it(evaluator):
    reward = rl.GRPOReward(evaluator)
    completions = [fenced(RELU), fenced(WRONG), "I cannot write this kernel.",
                   [{"role": "assistant", "content": fenced(RELU)}]]  # a conversational dataset's completion
    rewards = reward(prompts=["p"] * 4, completions=completions, completion_ids=[[1]] * 4,
                     problem=["cpu/relu"] * 4, trainer_state=None)
    statuses = [r and r.status for r in reward.last_results]
    assert statuses == ["correct", "incorrect", None, "correct"], [r and r.error for r in reward.last_results]
    # correct in Triton's interpreter: flagged `interpreted`, so its speed earns nothing (exactly the correct reward);
    # on cores other processes used while it was timed (`contended`), no reward at all
    assert "interpreted" in reward.last_results[0].flags
    assert rewards == [correct_reward(reward.last_results[0]), 0.1, 0.0, correct_reward(reward.last_results[3])]
    with pytest.raises(ValueError, match="'problem' column"):
        reward(prompts=["p"], completions=[fenced(RELU)])


def correct_reward(result: EvalResult) -> float | None:
    return None if "contended" in result.flags else 1.0


def test_verl_scores(evaluator, monkeypatch):
    monkeypatch.setattr(rl._shared, "_evaluator", evaluator)
    batch = rl.verl_batch_score(data_sources=["kernels"] * 2, solution_strs=[fenced(RELU), "no code"],
                                ground_truths=["cpu/relu"] * 2, extra_infos=[{}, {}])
    measured = correct_reward(rl._shared.last_results[0]) is not None
    assert batch == [{"score": 1.0 * measured, "measured": float(measured), "correct": 1.0,
                      "speedup": batch[0]["speedup"]},
                     {"score": 0.0, "measured": 1.0, "correct": 0.0, "speedup": 0.0}]
    assert batch[0]["speedup"] > 0
    one = rl.verl_score(data_source="kernels", solution_str=fenced(WRONG), ground_truth="cpu/relu", extra_info={})
    assert one["score"] == 0.1 and one["correct"] == 0.0
    json.dumps(batch)  # verl logs them


def result(status: str, speedup: float | None = None, flags: tuple[str, ...] = ()) -> EvalResult:
    return EvalResult(problem_id="p", problem_sha256="0", candidate_path="c", candidate_sha256="0", target="cpu",
                      device_name="cpu", torch_version="t", dtype="float32", build_protocol=1, harness_version="h",
                      status=status, speedup=speedup, flags=list(flags))


@pytest.mark.parametrize(("got", "reward"), [
    (None, 0.0), (result("compile_error"), 0.0), (result("rejected"), 0.0), (result("incorrect"), 0.1),
    (result("timeout"), 0.1), (result("harness_error"), None), (result("correct", 2.0, ("contended",)), None),
    (result("correct", 2.0), 1.5), (result("correct", 100.0), 2.5), (result("correct", 0.1), 0.5),
    (result("correct", 4.0, ("noisy_timing",)), 2.0), (result("correct", 4.0, ("low_coverage",)), 1.0),
    (result("correct", 50.0, ("faster_than_light",)), 0.1), (result("correct", 1.4, ("reference_slowed",)), 0.1)])
def test_shaping(got, reward):
    assert rl.Shaping().reward(got) == reward
