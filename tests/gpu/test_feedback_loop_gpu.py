"""Feedback a model can act on, through the whole loop on the cuda target (see tests/feedback_loop.py). Needs a GPU:
`pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.feedback_loop import feedback_loop_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(feedback_loop_tests("cuda"))
