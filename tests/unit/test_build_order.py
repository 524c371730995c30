"""The scheduler's policy: the order builds start in (scheduler.Batch.to_build, from eval/build_cost.py's estimate),
which of them take the cores before the others (Batch.leads), and how many evaluation children it keeps starting
ahead (scheduler.spares_wanted)."""
from harness.eval.bench_candidates import batch
from harness.eval.build_cost import LEAN, NOTHING, TORCH_HEADERS, expected_build_cost
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.scheduler import MAX_SPARES, SPARES, Batch, spares_wanted
from harness.types import Problem
from tests.conftest import eval_result

IMPLICIT = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""
__global__ void k(float* x) { x[threadIdx.x] = 0.f; }
void launch(float* x) { k<<<1, 32>>>(x); }
"""
ext = load_inline(name="k", cpp_sources="void launch(float* x);", cuda_sources=CUDA, functions=["launch"])
'''


def test_the_estimate_follows_what_nvcc_reads():
    lean, heavy, triton, cpp = (batch(shape, 1, "s")[0] for shape in ("lean", "torch", "triton", "cpp"))
    assert expected_build_cost(lean) == LEAN  # no torch header in the .cu, the C++ binding's precompiled
    assert expected_build_cost(heavy) == TORCH_HEADERS
    assert expected_build_cost(triton) == NOTHING and expected_build_cost("import torch\n") == NOTHING
    assert expected_build_cost(cpp) == LEAN
    # load_inline puts torch/types.h before every .cu unless no_implicit_headers=True
    assert expected_build_cost(IMPLICIT) == TORCH_HEADERS
    assert expected_build_cost(IMPLICIT.replace('functions=["launch"]', 'functions=["launch"], '
                                                                       'no_implicit_headers=True')) == LEAN


def jobs_of(sources: list[str]) -> list[Job]:
    problem = Problem(id="p", path="/p.py", sha256="0" * 64, source="", level=1, description="", target="cuda")
    return [Job(problem, candidate_from_source(s)) for s in sources]


def test_on_a_gpu_the_cheapest_build_goes_first_then_the_longest():
    heavy, lean, triton = batch("torch", 3, "a"), batch("lean", 3, "b"), batch("triton", 1, "c")
    sources = [heavy[0], lean[0], heavy[1], triton[0], lean[1], heavy[2], lean[2]]
    order = [candidate.source for _, candidate in Batch(jobs_of(sources), "cuda").to_build(devices=1)]
    assert order[0] == triton[0]  # lands first: the GPU starts on it
    assert order[1:4] == heavy  # then the longest, in the order they came
    assert order[4:] == lean
    two = [candidate.source for _, candidate in Batch(jobs_of(sources), "cuda").to_build(devices=2)]
    assert two[:2] == [triton[0], lean[0]] and two[2:5] == heavy
    # the first for each device takes the cores while the device waits for it: the others yield to it
    assert Batch(jobs_of(sources), "cuda").leads(devices=1) == 1 and Batch(jobs_of(sources), "cuda").leads(2) == 2


def test_on_the_cpu_target_longest_first():
    heavy, cpp = batch("torch", 1, "a"), batch("cpp", 2, "b")
    order = [c.source for _, c in Batch(jobs_of([cpp[0], heavy[0], cpp[1]]), "cpu").to_build()]
    assert order == [heavy[0], cpp[0], cpp[1]]
    assert Batch(jobs_of([cpp[0], heavy[0], cpp[1]]), "cpu").leads() == 0  # nothing evaluates beside builds there


def test_children_make_tritons_driver_ahead_only_for_a_batch_with_triton_on_a_gpu():
    lean, triton = batch("lean", 2, "a"), batch("triton", 1, "b")
    assert Batch(jobs_of([*lean, *triton]), "cuda").triton
    assert not Batch(jobs_of(lean), "cuda").triton
    assert not Batch(jobs_of(triton), "cpu").triton  # the interpreter has no driver to make


def test_children_start_as_many_evaluations_ahead_as_a_runner_start_outlasts():
    # H200 figures: runners ready 8-14 s after their start, evaluations of 3.3 s
    assert spares_wanted(eval_result(eval=3.3, runner_ready_s=14.0), SPARES) == 6
    assert spares_wanted(eval_result(eval=3.3, runner_ready_s=9.0), 6) == 4
    assert spares_wanted(eval_result(eval=10.0, runner_ready_s=5.0), 5) == SPARES  # never fewer
    assert spares_wanted(eval_result(eval=0.5, runner_ready_s=30.0), SPARES) == MAX_SPARES  # never more
    assert spares_wanted(eval_result(), 5) == 5  # a result that does not say (a failed build) changes nothing
