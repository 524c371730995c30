"""Escapes on the cpu target, sandbox off and on, each followed by an honest ReLU (see tests/escapes.py)."""
from tests.escapes import escape_tests

globals().update(escape_tests("cpu"))
