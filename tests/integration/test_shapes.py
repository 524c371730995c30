"""Build fidelity on the cpu target: every shape of load_inline / load call in
tests/fixtures/solutions/shapes/cpu_*.py ends the same way under the harness (cold, then with its
precompiled torch/extension.h warm, and with build acceleration off) as under plain torch (see tests/shapes.py;
outside `pytest -m slow`, plain torch builds only the shapes that fail to build, and the others are held to their
headers' verdicts)."""
from tests.shapes import matrix_tests

# main.cpp's flag sets: none, and -O3 -march=native -std=c++17 (each PCH is ~0.8 GB and ~30 s to make). Built with
# acceleration off in CI: the shapes it changes most (a torch-header build that would take the PCH, one whose compile
# error would be retried without it). Built cold in CI, of the shapes that can use a PCH: one of each flag set (each
# makes its PCH); the others are built warm, with it (a cold build of one is a 40-100 s parse of torch's headers on
# the loaded CI machine, as the off builds and the plain torch ones are). The slow tier builds every shape every way.
globals().update(matrix_tests("cpu", flag_sets=2, off_in_ci=("cpu_torch_include", "cpu_compile_error"),
                              warm_only_in_ci=("cpu_compile_error", "cpu_no_implicit_headers", "cpu_pybind11_module",
                                               "cpu_sources_list")))
