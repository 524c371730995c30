"""Build fidelity on the cuda target: every shape of load_inline call in
tests/fixtures/solutions/shapes/cuda_*.py ends the same way under the harness (cold, then with its
precompiled torch/extension.h warm, and with build acceleration off) as under plain torch (see tests/shapes.py).
Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.shapes import matrix_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

# main.cpp's flag sets (with CUDA's include paths): none, and -O3 -std=c++17
globals().update(matrix_tests("cuda", flag_sets=2, build_workers=4))
