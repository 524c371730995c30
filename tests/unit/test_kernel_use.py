"""Runtime verdicts from coverage (eval/kernel_use.py): what ran decides, against the threshold in force."""
from harness.eval.kernel_use import judge
from harness.evidence import Coverage, KernelTime
from harness.flags import INTERPRETED, LOW_COVERAGE, NO_KERNEL_RAN

RELU = KernelTime(name="aten::relu", owner="pytorch", ms=1.0)


def coverage(share, calls=1, candidate_ms=1.0, pytorch_ms=1.0):
    return Coverage(share=share, candidate_ms=candidate_ms, pytorch_ms=pytorch_ms, calls=calls, top=(RELU,))


def test_no_call_into_the_candidates_kernels_is_a_rejection_naming_what_did_the_work():
    use = judge(coverage(0.0, calls=0, candidate_ms=0.0), "cpu", 0.5)
    assert use.flags == (NO_KERNEL_RAN,) and f"[{NO_KERNEL_RAN}]" in use.rejection and "aten::relu" in use.rejection


def test_on_the_gpu_functions_that_launch_no_kernel_of_their_own_ran_none():
    assert judge(coverage(0.0, candidate_ms=0.0), "cuda", 0.5).flags == (NO_KERNEL_RAN,)
    # on the CPU the function's own time is its work: low, not absent
    assert judge(coverage(0.0, candidate_ms=0.0), "cpu", 0.5).flags == (LOW_COVERAGE,)


def test_below_the_threshold_is_flagged_and_at_it_is_not():
    assert judge(coverage(0.1), "cpu", 0.5).flags == (LOW_COVERAGE,)
    assert judge(coverage(0.5), "cuda", 0.5).flags == ()
    assert judge(coverage(0.1), "cpu", 0.05).flags == ()  # a problem's MIN_COVERAGE, or --min-coverage
    assert judge(coverage(0.1), "cpu", 0.5).rejection is None


def test_nothing_measured_judges_nothing():
    assert judge(None, "cpu", 0.5).flags == () and judge(coverage(None), "cpu", 0.5).flags == ()


def test_triton_interpreted_on_the_cpu_is_flagged_and_compiled_on_the_gpu_is_not():
    launched = Coverage(share=1.0, candidate_ms=5.0, pytorch_ms=0.0, calls=1, triton_launches=1)
    assert judge(launched, "cpu", 0.5).flags == (INTERPRETED,)
    assert judge(launched, "cuda", 0.5).flags == ()
