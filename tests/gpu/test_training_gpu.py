"""Training problems on the cuda target (issue 59): the training corpus (tests/training_corpus.py) as Triton kernels
written from the reference's (tests/training_triton.py), on level1/layer_norm_training. Real children. Needs a GPU:
`pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.training_corpus import training_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(training_tests("cuda"))
