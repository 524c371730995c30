"""A problem whose reference output cannot tell right from wrong, given by path (so never gated): every
evaluation finds it out. Its outputs are ~1e-7, inside fp32's atol of 1e-4 (Sakana's published kernel returned
zeros for such a KernelBench problem and was judged correct, 9.76x): a candidate returning zeros is
incorrect by the relative criterion, an honest one is correct but flagged, and neither counts in any rate."""
import json
import textwrap

import pytest

from tests.conftest import json_lines, run_cli

PROBLEM = '''
"""ReLU scaled down to ~1e-7: inside the absolute tolerance everywhere."""
import torch
import torch.nn as nn

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 1e-7


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
'''

CANDIDATE = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
torch::Tensor scaled_relu(torch::Tensor x, double scale) {
    auto out = torch::empty_like(x);
    auto* o = out.data_ptr<float>(); auto* in = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] > 0.f ? in[i] * (float)scale : 0.f;
    return out;
}
"""
ext = load_inline(name="scaled_relu", cpp_sources=CPP, functions=["scaled_relu"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.scaled_relu(x.contiguous(), SCALE)
'''


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    root = tmp_path_factory.mktemp("uninformative")
    problem = root / "tiny_relu.py"
    problem.write_text(textwrap.dedent(PROBLEM))
    paths = []
    for name, scale in (("honest", "1e-7"), ("zeros", "0.0")):
        path = root / f"{name}.py"
        path.write_text(textwrap.dedent(CANDIDATE).replace("SCALE)", f"{scale})"))
        paths.append(path)
    results = root / "results"
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", problem, "--results-dir", results,
                   "--run", "tiny", "--timing-budget", "1", *paths)
    assert proc.returncode == 0, proc.stderr
    honest, zeros = json_lines(proc.stdout)
    return honest, zeros, results


def test_zeros_where_the_reference_varies_are_incorrect_whatever_atol_says(evaluated):
    _, zeros, _ = evaluated
    assert zeros["status"] == "incorrect", zeros
    assert "0 everywhere, where the reference varies" in zeros["error"]
    assert "uninformative_problem" in zeros["flags"] and "mostly zeros" in zeros["uninformative"]


def test_an_honest_kernel_is_correct_but_flagged_and_counts_nowhere(evaluated):
    honest, _, results = evaluated
    assert honest["status"] == "correct" and not honest["counted"], honest
    assert "uninformative_problem" in honest["flags"] and "mostly zeros" in honest["uninformative"]
    board = json.loads(run_cli("report", "--json", "--run", "tiny", "--results-dir", results).stdout)
    assert board["summary"]["uninformative"] == 2 and board["summary"]["candidates"] == 0
    assert board["summary"]["correct_rate"] is None and board["summary"]["geomean_speedup"] is None
    assert {row["candidate"].rsplit("/", 1)[-1] for row in board["uninformative"]} == {"honest.py", "zeros.py"}
    text = run_cli("report", "--run", "tiny", "--results-dir", results, env={"COLUMNS": ""}).stdout
    assert "uninformative problems" in text and "mostly zeros" in text
