"""The truth check against allclose on an honest CUDA kernel (through tests/corpus.py's pipeline, as the corpus runs):
a tiled matmul that sums each 4096-long dot product in its own order (in sequence over K, where cuBLAS splits K) is
off the fp32 reference by more than 1e-4 on a few near-zero outputs, so allclose at 1e-4 calls it incorrect; against
the float64 truth it is within a few times the reference's own error, so the truth check calls it correct. The cpu
twin is tests/integration/test_truth_cpu.py. Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.corpus import CORPUS, truth_against_allclose

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

HONEST = CORPUS / "correct" / "cuda_matmul_long_dot.py"


def test_an_honest_order_of_summation_is_correct_under_truth_and_incorrect_under_allclose(tmp_path):
    truth_against_allclose(HONEST, "cuda", tmp_path)
