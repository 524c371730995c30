"""The truth check against allclose on an honest kernel (through tests/corpus.py's pipeline, as the corpus runs): a
C++ matmul that sums each 4096-long dot product in its own order is off the fp32 reference by more than 1e-4 on a few
near-zero outputs, so allclose at 1e-4 calls it incorrect; against the float64 truth it is within a few times the
reference's own error, so the truth check calls it correct."""
from tests.corpus import CORPUS, truth_against_allclose

HONEST = CORPUS / "correct" / "cpu_matmul_long_dot.py"


def test_an_honest_order_of_summation_is_correct_under_truth_and_incorrect_under_allclose(tmp_path):
    truth_against_allclose(HONEST, "cpu", tmp_path)
