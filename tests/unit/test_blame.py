"""Whose is a build that failed with the precompiled header (harness/fastbuild/blame.py): the answer's where every
error is at a line it wrote, else perhaps the header's. The outputs are the real g++'s, on a main.cpp laid out as
torch writes it, with a small stand-in for torch/extension.h (and its real precompiled header) so each compile takes
a moment; nvcc's and the compiler's own failures, which this machine cannot make on demand, are written out."""
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.fastbuild.blame import the_answers

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

HEADER = """#pragma once
#include <cstdint>
namespace torch { struct Tensor { std::int64_t n; }; }
template <class T> int twice(T t) { return t.missing() * 2; }
"""
ANSWER = """
torch::Tensor relu(torch::Tensor x) {
    return {x.n + zero_typo};
}
"""
IMPLICIT = "#include <torch/extension.h>\n"


@pytest.fixture
def headers(tmp_path) -> Path:
    """torch's include directory as the compile sees it: torch/extension.h."""
    (tmp_path / "include" / "torch").mkdir(parents=True)
    (tmp_path / "include" / "torch" / "extension.h").write_text(HEADER)
    return tmp_path / "include"


@pytest.fixture
def pch(tmp_path, headers) -> Path:
    """A PCH directory as pch.py makes one: the header's PCH, with a link to the header beside it."""
    directory = tmp_path / "pch"
    (directory / "torch").mkdir(parents=True)
    subprocess.run(["g++", "-I", str(headers), "-x", "c++-header", str(headers / "torch" / "extension.h"),
                    "-o", str(directory / "torch" / "extension.h.gch")], check=True)
    (directory / "torch" / "extension.h").symlink_to(headers / "torch" / "extension.h")
    return directory


def failed_compile(build_dir: Path, main_cpp: str, *includes: Path) -> str:
    """What ninja prints of the compile of `build_dir`/main.cpp (an absolute path, as torch gives it)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "main.cpp").write_text(main_cpp)
    flags = [f"-I{path}" for path in includes]
    done = subprocess.run(["g++", *flags, "-fsyntax-only", str(build_dir / "main.cpp")], cwd=build_dir,
                          capture_output=True, text=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0, done
    return done.stdout + done.stderr


def test_an_error_at_the_answer_s_line_is_the_answer_s(tmp_path, headers, pch):
    output = failed_compile(tmp_path / "ext0_relu", IMPLICIT + ANSWER, pch, headers)
    assert "main.cpp:4:" in output and "zero_typo" in output, output
    assert the_answers(output, tmp_path / "ext0_relu")


def test_an_unreadable_pch_is_the_header_s(tmp_path, headers, pch):
    gch = pch / "torch" / "extension.h.gch"
    with open(gch, "r+b") as handle:
        handle.truncate(gch.stat().st_size // 2)
    for head in (IMPLICIT, "// no_implicit_headers: the answer includes torch/extension.h first\n\n"
                           "#include <torch/extension.h>\n"):
        output = failed_compile(tmp_path / "ext0_relu", head + ANSWER, pch, headers)
        assert "cannot read PCH file" in output and "main.cpp:1:" in output, output  # the first line, either way
        assert not the_answers(output, tmp_path / "ext0_relu")


def test_an_error_at_the_include_the_pch_serves_is_the_header_s(tmp_path, headers):
    """Where the PCH's directory lost its header (or anything else at that line): not the answer's, though the
    line is its own (no_implicit_headers, torch/extension.h its first include)."""
    output = failed_compile(tmp_path / "ext0_relu", "// the answer's\n\n#include <torch/extension.h>\n" + ANSWER)
    assert "main.cpp:3:10: fatal error: torch/extension.h" in output, output
    assert not the_answers(output, tmp_path / "ext0_relu")


def test_an_error_in_a_header_is_not_the_answer_s_alone(tmp_path, headers):
    output = failed_compile(tmp_path / "ext0_twice", IMPLICIT + "int doubled = twice(1);\n", headers)
    assert "extension.h:4:" in output and "required from here" in output, output
    assert not the_answers(output, tmp_path / "ext0_twice")


def test_an_error_in_another_build_s_main_cpp_is_not_this_one_s(tmp_path, headers):
    output = failed_compile(tmp_path / "ext0_relu", IMPLICIT + ANSWER, headers)
    assert not the_answers(output, tmp_path / "ext1_relu")
    assert the_answers(output, tmp_path / "ext0_relu")


def test_a_relative_path_and_an_answer_line_mark_are_read(tmp_path, headers):
    build = tmp_path / "ext0_relu"
    output = failed_compile(build, IMPLICIT + ANSWER, headers).replace(f"{build}/", "")
    assert output.count("main.cpp:4:") >= 1, output
    assert the_answers(output, build)
    assert the_answers(output.replace("main.cpp:4:24:", "main.cpp:4:24 (answer line 40):"), build)


def test_nvcc_s_errors_are_placed_in_cuda_cu(tmp_path):
    build = tmp_path / "ext0_relu"
    build.mkdir()
    (build / "cuda.cu").write_text("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                                   "__global__ void k(float* x) { x[0] = zero_typo; }\n")
    assert the_answers(f'{build}/cuda.cu(4): error: identifier "zero_typo" is undefined\n', build)
    assert not the_answers(f'{build}/cuda.cu(2): catastrophic error: cannot open source file "cuda.h"\n', build)


@pytest.mark.parametrize("output", [
    None,  # not all of it was read
    "",
    "ninja: build stopped: subcommand failed.\n",
    "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n",
    "cc1plus: error: one or more PCH files were found, but they were invalid\n",
    "{build}/main.cpp:4:24: internal compiler error: Segmentation fault\n",
    "{build}/main.cpp:4:24: error: 'zero_typo' was not declared in this scope\n"
    "{build}/main.cpp:9:1: error: the line after the end of main.cpp\n",
], ids=["unread", "nothing", "no-error", "killed", "invalid-pch", "ice", "past-the-end"])
def test_what_cannot_be_placed_is_not_the_answer_s(tmp_path, output):
    build = tmp_path / "ext0_relu"
    build.mkdir()
    (build / "main.cpp").write_text(IMPLICIT + ANSWER)
    assert not the_answers(None if output is None else output.format(build=build), build)
