"""Build fidelity on the cpu target: every shape of load_inline / load call in
tests/fixtures/solutions/shapes/cpu_*.py ends the same way under the harness (cold, then with its
precompiled torch/extension.h warm) as under plain torch (see tests/shapes.py; outside `pytest -m slow`, plain torch
builds only the shapes that fail to build, and the others are held to their headers' verdicts)."""
from tests.shapes import matrix_tests

# main.cpp's flag sets: none, and -O3 -march=native -std=c++17 (each PCH is ~0.8 GB and ~30 s to make)
globals().update(matrix_tests("cpu", flag_sets=2))
