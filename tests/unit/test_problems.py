import json

import pytest

from harness.problems import index as problems
from harness.problems.index import ProblemError, parse_problem
from tests.conftest import FIXTURES, REPO

ROOT = REPO / "problems"
SEEDS = {"level1/reverse_cumsum", "level1/sum_dim1", "level1/masked_cumsum"}


def test_index_finds_the_seed_problems_without_errors():
    found, errors = problems.index(ROOT)
    assert errors == []
    ids = {p.id for p in found}
    assert SEEDS <= ids
    assert len([i for i in ids if i.startswith("cpu/")]) >= 5
    seed = next(p for p in found if p.id == "level1/reverse_cumsum")
    assert seed.level == 1 and seed.path.endswith("problems/level1/reverse_cumsum.py") and len(seed.sha256) == 64


def test_seed_problem_definitions_are_exact():
    text = (ROOT / "level1" / "reverse_cumsum.py").read_text()
    assert "torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)" in text
    assert "ROWS = 32768" in text and "COLS = 32768" in text and "return [DIM]" in text and "DIM = 1" in text
    text = (ROOT / "level1" / "sum_dim1.py").read_text()
    assert "torch.sum(x, dim=self.dim, keepdim=True)" in text
    assert "BATCH = 128" in text and "DIM1 = 4096" in text and "DIM2 = 4095" in text
    text = (ROOT / "level1" / "masked_cumsum.py").read_text()
    assert "torch.cumsum(x * mask, dim=self.dim)" in text and "torch.randint(0, 2, x.shape).bool()" in text


def test_indexing_does_not_import_torch(tmp_path):
    import subprocess
    import sys
    code = "import sys; from harness.problems import index; index.index(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("name, expected", [
    ("syntax_error.py", "syntax error at line 4"),
    ("no_model.py", "missing class Model"),
    ("no_get_inputs.py", "missing function get_inputs()"),
    ("init_not_list.py", "get_init_inputs() must return a list"),
])
def test_malformed_files_name_the_file_and_the_gap(name, expected):
    path = FIXTURES / "problems" / name
    with pytest.raises(ProblemError) as info:
        problems.parse_problem(path, ROOT)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_unknown_id_suggests_close_ones():
    with pytest.raises(ProblemError, match="did you mean 'level1/reverse_cumsum'"):
        problems.resolve("level1/reverse_cumsm", ROOT)
    with pytest.raises(ProblemError, match="level1/sum_dim1"):
        problems.resolve("sum_dim1", ROOT)  # a bare stem points at the ids that end with it


def test_resolve_accepts_paths_outside_the_root():
    problem = problems.resolve(str(FIXTURES / "problems" / "relu.py"), ROOT)
    assert problem.id == str(FIXTURES / "problems" / "relu.py")
    assert problem.level is None and problem.description.startswith("ReLU")
    with pytest.raises(ProblemError, match="no such problem file"):
        problems.resolve("missing/file.py", ROOT)


def test_metadata_constants(tmp_path):
    path = tmp_path / "p.py"
    path.write_text('"""Doc line.\n\nMore."""\nLEVEL = 2\nTOLERANCE = 1e-3\nRTOL = 0.01\nTAGS = ["scan"]\n'
                    "class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return [1] + [2]\n")
    problem = problems.parse_problem(path, tmp_path / "elsewhere")
    assert (problem.level, problem.atol, problem.rtol, problem.tags) == (2, 1e-3, 0.01, ("scan",))
    assert problem.description == "Doc line."
    path.write_text("TOLERANCE = -1\nclass Model: pass\n"
                    "def get_inputs(): return []\ndef get_init_inputs(): return []\n")
    with pytest.raises(ProblemError, match="non-negative"):
        problems.parse_problem(path, tmp_path)


def test_max_speedup_replaces_the_plausible_ceiling_for_one_problem(tmp_path):
    path = tmp_path / "p.py"
    body = "class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n"
    path.write_text("MAX_SPEEDUP = 4 * 10  # eager is a scalar loop\n" + body)
    assert problems.parse_problem(path, tmp_path).max_speedup == 40.0
    path.write_text(body)
    assert problems.parse_problem(path, tmp_path).max_speedup is None
    for bad in ("1", "0.5", "'fast'", "True"):
        path.write_text(f"MAX_SPEEDUP = {bad}\n" + body)
        with pytest.raises(ProblemError, match="MAX_SPEEDUP must be a number above 1"):
            problems.parse_problem(path, tmp_path)


def test_select_sets_ids_and_paths_without_repeats():
    level1 = sorted(p.id for p in problems.index(ROOT)[0] if p.level == 1)
    chosen = problems.select("level1,level1/sum_dim1," + str(FIXTURES / "problems" / "relu.py"), ROOT)
    ids = [p.id for p in chosen]
    assert ids[:-1] == level1 and SEEDS <= set(level1)  # sum_dim1 is not repeated
    assert ids[-1].endswith("relu.py")
    with pytest.raises(ProblemError):
        problems.select("nonexistent_set", ROOT)


def test_problem_json_roundtrip():
    problem = problems.resolve("level1/sum_dim1", ROOT)
    assert json.loads(problem.model_dump_json())["id"] == "level1/sum_dim1"


def test_metadata_may_be_arithmetic_over_earlier_constants(tmp_path):
    path = tmp_path / "level1" / "mm.py"
    path.parent.mkdir()
    path.write_text("M = 4096\nN = 2 * M\nFLOPS = 2 * M * N * M / 3\nMEMORY_GB = 25.5\n"
                    "TAGS = ['matmul', 'compute-bound']\n"
                    "class Model: pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n")
    p = parse_problem(path, tmp_path)
    assert p.flops == round(2 * 4096 * 8192 * 4096 / 3) and p.memory_gb == 25.5 and p.target == "cuda"
    path.write_text(path.read_text().replace("FLOPS = 2 * M * N * M / 3", "FLOPS = max(M, N)"))
    with pytest.raises(ProblemError, match="FLOPS must be a literal or arithmetic"):
        parse_problem(path, tmp_path)
    path.write_text(path.read_text().replace("FLOPS = max(M, N)", "FLOPS = -M"))
    with pytest.raises(ProblemError, match="FLOPS must be a positive number"):
        parse_problem(path, tmp_path)


def test_cpu_folder_or_constant_makes_a_cpu_problem(tmp_path):
    body = "class Model: pass\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n"
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "a.py").write_text(body)
    (tmp_path / "b.py").write_text("TARGET = 'cpu'\n" + body)
    (tmp_path / "c.py").write_text("TARGET = 'tpu'\n" + body)
    assert parse_problem(tmp_path / "cpu" / "a.py", tmp_path).target == "cpu"
    assert parse_problem(tmp_path / "b.py", tmp_path).target == "cpu"
    with pytest.raises(ProblemError, match="TARGET must be"):
        parse_problem(tmp_path / "c.py", tmp_path)


def test_every_shipped_problem_has_a_held_out_workload_and_levels_1_and_2_three_or_more():
    found, errors = problems.index(ROOT)
    assert errors == []
    assert [p.id for p in found if not any(w.held_out for w in p.workloads)] == []
    assert [p.id for p in found if p.level in (1, 2) and len(p.workloads) < 3] == []
    for p in found:  # checked, not timed: speedups stay those of the problem as written, as its baselines are
        assert [w.name for w in p.workloads if w.timed] == ["default"], p.id
