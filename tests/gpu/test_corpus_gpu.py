"""The adversarial corpus on the cuda target (see tests/corpus.py). Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.corpus import corpus_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(corpus_tests("cuda"))
