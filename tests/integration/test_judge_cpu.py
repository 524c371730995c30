"""Attacks on the evaluation's own process, on the cpu target (see tests/judge.py)."""
from tests.judge import judge_tests

globals().update(judge_tests("cpu"))
