"""Attacks on the evaluation's own process, on the GPU (see tests/judge.py)."""
import pytest

from harness.device import visible_gpus
from tests.judge import judge_tests

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

globals().update(judge_tests("cuda"))
