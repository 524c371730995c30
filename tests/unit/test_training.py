"""training.py: a training problem's call, differential against plain autograd (the truth for what a forward and a
backward give), with its upstream gradients drawn from the call's seed alone."""
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from harness.child.common import EvalFailure
from harness.child.training import forward_backward, leaves, names, upstream
from tests.conftest import REPO


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 4)
        self.unused = nn.Parameter(torch.ones(3))

    def forward(self, x, scale, index):
        return self.linear(x) * scale, index + 1


def test_a_call_gives_what_plain_autograd_gives_for_the_same_upstream_gradient():
    torch.manual_seed(0)
    model, x, scale, index = Net(), torch.randn(5, 6), torch.randn(1), torch.arange(3)
    step = forward_backward(model, leaves([x, scale, index]), seed=1234)
    xs, ss = x.clone().requires_grad_(), scale.clone().requires_grad_()
    out, _ = model(xs, ss, index)
    [grad_out] = upstream([(out.shape, out.dtype)], "cpu", 1234)
    model.zero_grad(set_to_none=True)
    out.backward(grad_out)
    # parameters in named_parameters() order (the module's own first); the unused one's gradient zeros, not None
    expected = (out.detach(), index + 1, xs.grad, ss.grad, torch.zeros(3), model.linear.weight.grad,
                model.linear.bias.grad)
    assert len(step.flat()) == len(expected)
    for got, want in zip(step.flat(), expected):
        assert torch.equal(got, want)
    assert names(model, [x, scale, index], len(step.outputs)) == [
        "output[0]", "output[1]", "the gradient of x", "the gradient of scale", "the gradient of unused",
        "the gradient of linear.weight", "the gradient of linear.bias"]


def test_the_upstream_gradient_is_the_seeds_alone():
    shapes = [(torch.Size([4, 3]), torch.float32), (torch.Size([2]), torch.float64)]
    first, again, other = (upstream(shapes, "cpu", seed) for seed in (7, 7, 8))
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0])
    assert [(t.shape, t.dtype) for t in first] == shapes


def test_a_detached_output_is_incorrect_and_says_why():
    class Detached(nn.Module):
        def forward(self, x):
            return (x * 2).detach()
    with pytest.raises(EvalFailure, match="does not require grad") as caught:
        forward_backward(Detached(), leaves([torch.randn(3)]), seed=1)
    assert caught.value.status == "incorrect"


def test_leaves_leave_the_callers_inputs_alone():
    x, n = torch.randn(3), torch.arange(2)
    [leaf, same] = leaves([x, n])
    assert leaf.requires_grad and leaf.is_leaf and not x.requires_grad and leaf.data_ptr() != x.data_ptr()
    assert same is n


def test_a_training_workload_plans_for_its_gradients_and_upstream(tmp_path):
    """The memory a workload is skipped by counts a training call's gradients (an input's, a parameter's) and upstream
    gradients (an output's) in both processes and in the truth."""
    from harness.child.judge_workload import planned_bytes
    from harness.child.workload import Instance

    path = tmp_path / "p.py"
    path.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(256))

            def forward(self, x):
                return x * self.w


        def get_inputs():
            return [torch.randn(1024, 256)]


        def get_init_inputs():
            return []
        """))
    instance = Instance(str(path), path.read_text())
    (plain, truth), (trained, trained_truth) = (planned_bytes(instance, torch.float32, t) for t in (False, True))
    held = 4 * (256 + 2 * 1024 * 256)  # parameters, inputs and outputs, in fp32
    assert trained - plain == 2 * held
    assert trained_truth - trained == 2 * (truth - plain)


def test_a_training_problem_s_speed_of_light_counts_its_backward():
    """The roofline of a training call: 3 x (inputs + parameters) + 2 x outputs bytes, and the FLOP counter's count
    over a meta forward and backward (a linear layer's backward does its forward's work twice: dx and dw)."""
    from harness.child.baseline import problem_costs
    from harness.child.workload import import_problem

    path = str(REPO / "problems" / "level1" / "linear_training.py")
    problem = import_problem(path, Path(path).read_text())
    forward, trained = (problem_costs(problem, torch.float32, t) for t in (False, True))
    m, k, n = problem.TOKENS, problem.IN_FEATURES, problem.OUT_FEATURES
    held, out = 4 * (m * k + k * n + n), 4 * m * n
    assert (forward["bytes_moved"], trained["bytes_moved"]) == (held + out, 3 * held + 2 * out)
    assert trained["flops"] == 3 * forward["flops"] == 3 * 2 * m * k * n


def test_the_triton_corpus_is_the_reference_with_each_cases_edits():
    """Every edit still finds its text in the Triton reference (source() asserts it), each case compiles, and the
    honest one is the reference's code itself."""
    from tests.training_triton import REFERENCE, VARIANTS, source

    reference = REFERENCE.read_text()
    code = reference[reference.index('"""', 3) + 3:]
    for name in VARIANTS:
        text = source(name)
        compile(text, f"{name}.py", "exec")
        assert (text.endswith(code)) == (name == "honest"), name
