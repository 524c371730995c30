"""Runtime verdicts from coverage through `harness eval` on the cpu target (see tests/kernel_use.py)."""
from tests.kernel_use import kernel_use_tests

globals().update(kernel_use_tests("cpu"))
