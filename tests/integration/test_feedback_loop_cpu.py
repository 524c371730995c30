"""Feedback a model can act on, through the whole loop on the cpu target (see tests/feedback_loop.py)."""
from tests.feedback_loop import feedback_loop_tests

globals().update(feedback_loop_tests("cpu"))
