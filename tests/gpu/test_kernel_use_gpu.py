"""Runtime verdicts from coverage through `harness eval` on the cuda target (see tests/kernel_use.py). Needs a
GPU: `pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.kernel_use import kernel_use_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(kernel_use_tests("cuda"))
