"""`harness audit` over a small answer file on the cpu target: real builds, real children, a real store.

Two of the answers are to a problem whose reference output cannot tell right from wrong, given inline (so never
gated): every evaluation finds it out. Its outputs are ~1e-7, inside fp32's atol of 1e-4 (Sakana's published
kernel returned zeros for such a KernelBench problem and was judged correct, 9.76x): an answer returning zeros
is incorrect by the relative criterion, an honest one is correct but flagged, and neither counts in any rate."""
import json
import textwrap

import pytest

from tests.conftest import FIXTURES, LEAN_RELU, REPO, SOLUTIONS, json_lines, run_cli, share_builds

PROBLEM = FIXTURES / "problems" / "relu.py"
TINY_PROBLEM = '''
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

TINY_CANDIDATE = '''
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




def answers(tmp_path, records) -> str:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")  # a blank line is no answer
    return str(path)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit")
    share_builds(tmp / "results", tmp_path_factory)
    records = [
        {"label": "honest", "problem": str(PROBLEM), "source": (SOLUTIONS / "correct" / "cpu_relu.py").read_text(),
         "claimed_speedup": 2.0},
        {"label": "aliased, inline problem", "problem": PROBLEM.read_text(),
         "source": (SOLUTIONS / "exploit" / "cpu_aliased_entry.py").read_text(), "claimed_speedup": 1.3},
        {"problem": "cpu/relu", "source": "import torch\n"},
        *({"label": f"tiny {name}", "problem": textwrap.dedent(TINY_PROBLEM),
           "source": textwrap.dedent(TINY_CANDIDATE).replace("SCALE)", f"{scale})")}
          for name, scale in (("honest", "1e-7"), ("zeros", "0.0"))),
    ]
    proc = run_cli("audit", "--json", "--target", "cpu", "--results-dir", tmp / "results", "--timing-budget", "1",
                   answers(tmp, records))
    assert proc.returncode == 0, proc.stderr
    return json_lines(proc.stdout), tmp


def test_every_answer_is_measured_against_its_claim_with_the_reason(audited):
    (honest, aliased, empty, *_), _ = audited
    assert [r["label"] for r in (honest, aliased, empty)] == ["honest", "aliased, inline problem", "line 3"]
    assert honest["status"] == "correct" and honest["claimed_speedup"] == 2.0
    if honest["counted"]:  # a loaded machine may flag it contended: then it has no measured share of its claim
        assert honest["measured_vs_claimed"] == pytest.approx(honest["speedup"] / 2.0)
    else:
        assert honest["measured_vs_claimed"] is None and "contended" in honest["flags"]
    assert aliased["status"] == "rejected" and "[kernel-unused]" in aliased["reason"]
    assert aliased["measured_vs_claimed"] is None and aliased["problem"].endswith(".py")
    assert empty["status"] == "no_code" and "defines no ModelNew" in empty["reason"]


def test_the_table_and_the_store(audited):
    _, tmp = audited
    runs = json_lines(run_cli("runs", "--json", "--results-dir", tmp / "results").stdout)
    assert [(r["run"], r["evaluations"]) for r in runs] == [("audit", 5)]
    # the two answers to the uninformative problem stand apart, in no rate
    board = json.loads(run_cli("report", "--json", "--run", "audit", "--results-dir", tmp / "results").stdout)
    assert board["summary"]["uninformative"] == 2 and board["summary"]["candidates"] == 3
    assert sorted(row["status"] for row in board["uninformative"]) == ["correct", "incorrect"]
    text = run_cli("report", "--run", "audit", "--results-dir", tmp / "results", env={"COLUMNS": ""}).stdout
    assert "uninformative problems" in text and "mostly zeros" in text
    text = run_cli("audit", "--target", "cpu", "--results-dir", tmp / "results", tmp / "answers.jsonl",
                   env={"COLUMNS": ""}).stdout  # served from the store this time
    assert "measured against claimed" in text and "claims hold to within 10 %" in text and "honest" in text
    again = json.loads(run_cli("report", "--json", "--run", "audit", "--results-dir", tmp / "results").stdout)
    assert again["summary"] == board["summary"]  # the same answers audited again replace, never add to, the run


def test_zeros_where_the_reference_varies_are_incorrect_whatever_atol_says(audited):
    (*_, _, zeros), _ = audited
    assert zeros["status"] == "incorrect", zeros
    assert "0 everywhere, where the reference varies" in zeros["error"]
    assert "uninformative_problem" in zeros["flags"] and "mostly zeros" in zeros["uninformative"]


def test_an_honest_kernel_on_an_uninformative_problem_is_correct_but_flagged_and_counts_nowhere(audited):
    (*_, honest, _), _ = audited
    assert honest["status"] == "correct" and not honest["counted"], honest
    assert "uninformative_problem" in honest["flags"] and "mostly zeros" in honest["uninformative"]
    assert honest["reason"].startswith("uninformative problem: ") and "mostly zeros" in honest["reason"]


@pytest.mark.parametrize("line, says", [
    ("not json", "answers.jsonl:2: not JSON"),
    ('["a list"]', "answers.jsonl:2: a JSON object is needed"),
    ('{"problem": "cpu/relu"}', "answers.jsonl:2: \"source\" must be"),
    ('{"problem": "cpu/relu", "source": "x", "claimed_speedup": -1}', "\"claimed_speedup\" must be a positive"),
    ('{"problem": "cpu/no_such_problem", "source": "x"}', "answers.jsonl:2: "),
    ('{"problem": "cpu/relu", "source": "x", "claim": 2}', "unknown field(s) claim"),
])
def test_a_malformed_answer_file_is_exit_2_naming_the_line_and_nothing_runs(tmp_path, line, says):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"problem": "cpu/relu", "source": "import torch\n"}) + "\n" + line + "\n")
    proc = run_cli("audit", "--target", "cpu", "--results-dir", tmp_path / "results", path, cwd=REPO)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert not (tmp_path / "results" / "harness.db").exists()


def test_a_directory_of_answers_in_every_layout_it_takes(tmp_path):
    honest = LEAN_RELU  # what it answers is found from where it lies
    dump = tmp_path / "dump"
    files = {"level_1_problem_19_sample_0_kernel.py": honest,  # KernelBench's own sample names
             "level1/19_ReLU/sample_1.py": honest,  # LEVEL/PROBLEM/SAMPLE.py
             "beside/relu.py": PROBLEM.read_text(), "beside/relu_answer.py": honest,  # beside its problem
             "headed.py": f"# problem: {PROBLEM}\n" + honest,
             "notes/README.py": "print('not an answer')\n"}
    for name, text in files.items():
        (dump / name).parent.mkdir(parents=True, exist_ok=True)
        (dump / name).write_text(text)
    proc = run_cli("audit", "--json", "--target", "cpu", "--results-dir", tmp_path / "results", "--timing-budget",
                   "1", "--problems-dir", FIXTURES / "kernelbench", dump)
    assert proc.returncode == 0, proc.stderr
    rows = {row["label"]: row for row in json_lines(proc.stdout)}
    assert {label: row["problem"] for label, row in rows.items()} == {  # found in the problems dir: its id
        "level_1_problem_19_sample_0_kernel.py": "level1/19_ReLU", "level1/19_ReLU/sample_1.py": "level1/19_ReLU",
        "beside/relu_answer.py": str(dump / "beside" / "relu.py"), "headed.py": str(PROBLEM)}
    assert {row["status"] for row in rows.values()} == {"correct"}, rows
    (dump / "stray_answer.py").write_text(honest)  # nothing says what it answers
    proc = run_cli("audit", "--target", "cpu", "--results-dir", tmp_path / "results", "--problems-dir",
                   FIXTURES / "kernelbench", dump)
    assert proc.returncode == 2 and "stray_answer.py: its problem is not known" in proc.stderr, proc.stderr
