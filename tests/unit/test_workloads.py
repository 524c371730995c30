"""Workloads in the problem format: parsed from the file's syntax tree with errors naming the file and the
workload, drawn from the judge's seed, cut from the prompt's source, and their speedups combined by weight."""
import json
import math

import pytest
import torch

from harness.problems.index import ProblemError, parse_problem
from harness.problems.workload_file import public_source
from harness.workloads import DEFAULT, DRAWN_AVOIDS, Workload, WorkloadResult, mask_numbers, weighted_speedup

HEAD = '''"""A relu."""
import torch
import torch.nn as nn

ROWS = 256
COLS = 1024
EPS = 1e-5
TAGS = ["activation", "memory-bound"]
'''
TAIL = '''

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
'''


def problem_with(tmp_path, workloads: str, name: str = "p.py"):
    path = tmp_path / name
    path.write_text(HEAD + workloads + TAIL)
    return parse_problem(path, tmp_path)


def test_a_file_without_workloads_is_the_default_alone(tmp_path):
    assert problem_with(tmp_path, "").workloads == (DEFAULT,)


def test_workloads_follow_the_default_in_order(tmp_path):
    problem = problem_with(tmp_path, '''WORKLOADS = [
    {"name": "unaligned", "set": {"COLS": 1001}, "about": "rows not a multiple of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 64), "COLS": (100, 3000)}, "about": "drawn"},
    {"name": "wide", "set": {"COLS": 4096, "EPS": 1}, "public": True, "timed": True, "weight": 0.5, "about": "wide"},
]
''')
    names = [w.name for w in problem.workloads]
    assert names == ["default", "unaligned", "drawn", "wide"]
    unaligned, drawn, wide = problem.workloads[1:]
    assert unaligned.held_out and not unaligned.timed and unaligned.set == {"COLS": 1001}
    assert drawn.drawn and drawn.set["ROWS"] == (1, 64)
    assert wide.public and wide.timed and wide.weight == 0.5 and wide.set["EPS"] == 1  # an int where a float is
    assert Workload.model_validate_json(drawn.model_dump_json()) == drawn  # ranges survive JSON


@pytest.mark.parametrize(("workloads", "expected"), [
    ('WORKLOADS = {"name": "x"}', "WORKLOADS must be a list of dicts"),
    ('WORKLOADS = [{"name": "x", "about": "y", "sizes": {}}]', "unknown key(s) 'sizes'"),
    ('WORKLOADS = [{"name": "Bad Name", "about": "y"}]', "must be a lower-case identifier"),
    ('WORKLOADS = [{"name": "x"}]', "about"),
    ('WORKLOADS = [{"name": "x", "about": " "}]', "what kind of input"),
    ('WORKLOADS = [{"name": "default", "about": "y"}]', "default is the problem as written"),
    ('WORKLOADS = [{"name": "x", "about": "y"}, {"name": "x", "about": "z"}]', "the name 'x' is taken"),
    ('WORKLOADS = [{"name": "x", "about": "y", "set": {"BATCH": 2}}]', "sets BATCH, which the file does not assign"),
    ('WORKLOADS = [{"name": "x", "about": "y", "set": {"COLS": 2.5}}]', "but the file's COLS is a int"),
    ('WORKLOADS = [{"name": "x", "about": "y", "set": {"EPS": (1, 2)}}]', "the file's EPS is not an integer"),
    ('WORKLOADS = [{"name": "x", "about": "y", "set": {"COLS": (9, 3)}}]', "0 <= lo <= hi"),
    ('WORKLOADS = [{"name": "x", "about": "y", "timed": True, "set": {"COLS": (1, 3)}}]', "cannot draw"),
    ('WORKLOADS = [{"name": "x", "about": "y", "weight": 0}]', "greater than 0"),
    ('WORKLOADS = [{"name": "x", "about": "y", "set": {"COLS": COLS + 1}}]', "must be a literal"),
])
def test_a_malformed_workload_names_the_file_the_workload_and_the_fix(tmp_path, workloads, expected):
    with pytest.raises(ProblemError) as error:
        problem_with(tmp_path, workloads + "\n")
    assert str(tmp_path / "p.py") in str(error.value) and expected in str(error.value)
    if "[{" in workloads and "literal" not in expected:
        assert "WORKLOADS[" in str(error.value)


def test_a_drawn_size_is_the_same_for_the_same_seed_and_avoids_multiples_of_32():
    workload = Workload(name="drawn", about="drawn", set={"ROWS": (1, 4096), "COLS": 7})
    draws = [workload.values(seed) for seed in range(200)]
    assert draws[:3] == [workload.values(seed) for seed in range(3)]
    assert len({d["ROWS"] for d in draws}) > 150 and all(d["COLS"] == 7 for d in draws)
    assert all(1 <= d["ROWS"] <= 4096 and d["ROWS"] % DRAWN_AVOIDS for d in draws)
    assert Workload(name="w", about="a", set={"N": (32, 32)}).values(1) == {"N": 32}  # nothing else to draw


def test_the_prompt_source_leaves_the_workloads_out(tmp_path):
    problem = problem_with(tmp_path, '''# held-out shapes, not for the model
WORKLOADS = [
    {"name": "unaligned", "set": {"COLS": 1001}, "about": "unaligned rows"},
]
''')
    source = (tmp_path / "p.py").read_text()
    shown = public_source(source, problem.workloads)
    assert "WORKLOADS" not in shown and "1001" not in shown and "held-out shapes" not in shown
    assert [line for line in shown.splitlines() if line] == [line for line in (HEAD + TAIL).splitlines() if line]
    compile(shown, "shown", "exec")
    assert public_source(source, (DEFAULT,)) == source


def test_numbers_standing_alone_are_masked_names_keep_theirs():
    text = "trial 3: output has shape (999, 1001), expected (999, 1024.5e3) in float32 on conv2d_v2 cuda:0"
    assert mask_numbers(text) == "trial N: output has shape (N, N), expected (N, N) in float32 on conv2d_v2 cuda:N"


def result(name, ref_ms=None, candidate_ms=None, timed=True, weight=1.0):
    return WorkloadResult(name=name, about="a", public=True, timed=timed, weight=weight, status="correct",
                          ref_ms=ref_ms, candidate_ms=candidate_ms)


def test_the_speedup_is_the_weighted_geometric_mean_of_the_timed_workloads():
    assert weighted_speedup([result("a", 2.0, 1.0), result("b", 1.0, 1.0, timed=False)]) == pytest.approx(2.0)
    both = weighted_speedup([result("a", 4.0, 1.0, weight=3.0), result("b", 1.0, 1.0, weight=1.0)])
    assert both == pytest.approx(math.exp(3 * math.log(4) / 4))
    assert weighted_speedup([result("a", 4.0, 1.0), result("b")]) is None  # a timed one was not timed
    assert weighted_speedup([]) is None


def test_a_workload_result_prints_in_the_clis_vocabulary():
    record = result("wide", 3.0, 1.5).record()
    assert record["workload"] == "wide" and "name" not in record and record["speedup"] == pytest.approx(2.0)
    json.dumps(record)


def test_a_workloads_problem_is_the_text_the_parent_indexed(tmp_path):
    """A child makes every workload from the text the parent indexed, never from the file: a candidate that rewrites
    the problem file (where no sandbox stops it) changes no reference of the run."""
    from harness.child.workload import Instance

    path = tmp_path / "p.py"
    path.write_text(HEAD + TAIL)
    problem = parse_problem(path, tmp_path)
    path.write_text((HEAD + TAIL).replace("return torch.relu(x)", "return torch.relu(x) * 0.5"))
    first = Instance(problem.path, problem.source)
    later = first.variant({"ROWS": 3}, (1.0, 0.0))
    x = later.inputs("cpu", torch.float32, call_seed=1)[0]
    assert x.shape == (3, 1024)
    assert first.module.Model()(x).equal(x.relu()) and later.module.Model()(x).equal(x.relu())
