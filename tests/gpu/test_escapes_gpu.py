"""Escapes on the GPU, sandbox off and on, each followed by an honest ReLU (see tests/escapes.py)."""
import pytest

from harness.device import visible_gpus
from tests.escapes import escape_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(escape_tests("cuda"))
