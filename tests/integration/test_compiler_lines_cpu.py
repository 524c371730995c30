"""A real build's compiler errors name the answer's lines (harness/compiler_lines.py): in the build log the parent
keeps (eval/build.py), and in the exception of a build in `__init__` (child/loader.py, load mode). Both candidates
are pybind11-only, no torch header, so each build fails in seconds."""
import os
import subprocess
import sys
from pathlib import Path

from harness.device import discover
from harness.eval.build import BuildOptions, build, error_lines
from harness.eval.candidate import candidate_from_source
from harness.markers import CANDIDATE_FILE, LOG_FILE
from tests.conftest import REPO

KERNEL = r'''
#include <pybind11/pybind11.h>
#include <cstdint>
void relu(std::uintptr_t x, std::uintptr_t out, std::int64_t n) {
    const float* a = reinterpret_cast<const float*>(x);
    float* o = reinterpret_cast<float*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = a[i] > 0.f ? a[i] : undeclared_zero_xyz;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu", &relu); }
'''
AT_IMPORT = f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{KERNEL}"""
# two sources, joined by torch: the kernel starts on the generated file's third line
ext = load_inline(name="lean_broken", cpp_sources=["// the first source", CPP], no_implicit_headers=True)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        ext.relu(x.data_ptr(), out.data_ptr(), x.numel())
        return out
'''
IN_INIT = f'''import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{KERNEL}"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="late_broken", cpp_sources=CPP, no_implicit_headers=True)
'''


def the_error_line(text: str) -> str:
    [line] = [line for line in text.splitlines() if "undeclared_zero_xyz" in line and "error" in line]
    return line


def answer_line(source: str) -> int:
    [number] = [i for i, line in enumerate(source.splitlines(), 1) if "undeclared_zero_xyz" in line]
    return number


def test_a_failed_build_s_log_names_the_answer_s_lines(tmp_path):
    result = build(candidate_from_source(AT_IMPORT), discover("cpu"), tmp_path, BuildOptions(timeout_s=600))
    assert result.status == "compile_error", result.error
    mark = f"(answer line {answer_line(AT_IMPORT)}): error:"
    kept = (Path(result.directory) / LOG_FILE).read_text()
    assert kept == result.log and "/ext0_lean_broken/main.cpp:8:" in the_error_line(kept)
    assert mark in the_error_line(kept) and mark in the_error_line(result.error)  # summarize_failure's
    assert the_error_line(error_lines(kept)).startswith("main.cpp:8:")  # the build path cut, as before
    assert mark in the_error_line(error_lines(kept))


LOAD = """
import sys
from pathlib import Path
from harness.child.loader import import_candidate, install_extension_loader

directory, scratch = Path(sys.argv[1]), Path(sys.argv[2])
install_extension_loader(directory, "load", scratch)
try:
    import_candidate(directory).ModelNew()
except RuntimeError as exc:
    print(exc)
"""


def test_a_build_in_init_raises_the_answer_s_lines(tmp_path):
    (tmp_path / "built").mkdir()
    (tmp_path / "built" / CANDIDATE_FILE).write_text(IN_INIT)
    (tmp_path / "scratch").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path / "built"), str(tmp_path / "scratch")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert "Error building extension 'late_broken'" in done.stdout, done.stderr
    error = the_error_line(done.stdout)
    assert "/scratch/ext0_late_broken/main.cpp:7:" in error and f"(answer line {answer_line(IN_INIT)}): error" in error
