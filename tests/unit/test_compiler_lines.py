"""Compiler diagnostics in the answer's own line numbers (harness/compiler_lines.py): the generated files are
written by torch's own load_inline (its compile step left out), the diagnostics by the real g++ and nvcc."""
import itertools
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.compiler_lines import generated_sources, in_candidate_terms, line_map
from harness.eval.build import error_lines, summarize_failure

Generate = Callable[..., dict[str, str]]


@pytest.fixture
def generate(monkeypatch, tmp_path) -> Generate:
    """Run an answer's module code as the build child does (each load_inline in `<root>/ext<i>_<name>/`), torch
    writing main.cpp and cuda.cu as it always does but compiling nothing; the sources it wrote."""
    import torch.utils.cpp_extension as cpp_ext

    monkeypatch.setattr(cpp_ext, "_jit_compile", lambda *args, **kwargs: None)
    monkeypatch.setattr(cpp_ext, "remove_extension_h_precompiler_headers", lambda: None)
    real = cpp_ext.load_inline

    def run(answer: str, root: Path = tmp_path / "build") -> dict[str, str]:
        counter = itertools.count()

        def load_inline(name, *args, **kwargs):
            target = root / f"ext{next(counter)}_{name}"
            target.mkdir(parents=True)
            return real(name, *args, **{**kwargs, "build_directory": str(target)})

        monkeypatch.setattr(cpp_ext, "load_inline", load_inline)
        exec(compile(answer, "candidate.py", "exec"), {"__name__": "candidate"})
        return generated_sources(root)

    return run


def line_of(text: str, needle: str) -> int:
    """The 1-based line of `text` that holds `needle`, the only one."""
    [found] = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return found


def compile_log(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"})
    assert done.returncode != 0, done
    return done.stdout + done.stderr


PLAIN = '''from torch.utils.cpp_extension import load_inline

CPP = """
#include <cstdint>

int twice(int x) {
    return x * 2;
}

int broken(int x) {
    return undeclared_thing_xyz(x);
}

template <class T> T member_of(T x) { return x.no_such_member; }
int use() { return member_of(1); }
"""

ext = load_inline(name="plain", cpp_sources=CPP, no_implicit_headers=True)
'''


def test_gcc_errors_name_the_answer_s_lines(generate, tmp_path):
    generate(PLAIN)
    main = tmp_path / "build" / "ext0_plain" / "main.cpp"
    log = compile_log(["g++", "-fsyntax-only", str(main)])
    rewritten = in_candidate_terms(log, generate(PLAIN, tmp_path / "again"), PLAIN)  # another root: paths' ends
    error = next(line for line in rewritten.splitlines() if "undeclared_thing_xyz" in line and "error" in line)
    generated_line, answer_line = line_of(main.read_text(), "undeclared_thing_xyz"), line_of(PLAIN, "undeclared_thi")
    assert error == (f"{main}:{generated_line}:12 (answer line {answer_line}): error: "
                     "'undeclared_thing_xyz' was not declared in this scope")
    assert f"(answer line {line_of(PLAIN, 'int use()')}):   required from here" in rewritten
    assert f"(answer line {line_of(PLAIN, 'no_such_member')}): error: request for member" in rewritten
    assert "main.cpp: In function" in rewritten and rewritten.count("answer line") == 3
    # what reads the log after finds the same errors, with the answer's line in them
    assert summarize_failure(rewritten).splitlines()[0].endswith(error.split(": error: ")[1])
    assert f"\nmain.cpp:{generated_line}:12 (answer line {answer_line}): error:" in "\n" + error_lines(rewritten)


CUDA = '''from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = undefined_value_xyz;
}

template <class T> __global__ void reach(T* x) { x[0] = x->no_such_member; }
void launch(float* x) { reach<<<1, 1>>>(x); }
"""

ext = load_inline(name="fill", cpp_sources="", cuda_sources=CUDA_SRC, no_implicit_headers=True)
'''


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_nvcc_errors_name_the_answer_s_lines(generate, tmp_path):
    generated = generate(CUDA)
    cu = tmp_path / "build" / "ext0_fill" / "cuda.cu"
    log = compile_log(["nvcc", "-c", str(cu), "-o", str(tmp_path / "cuda.o")])
    rewritten = in_candidate_terms(log, generated, CUDA)
    assert (f"{cu}({line_of(cu.read_text(), 'undefined_value_xyz')}) (answer line "
            f"{line_of(CUDA, 'undefined_value_xyz')}): error: identifier \"undefined_value_xyz\" is undefined"
            ) in rewritten.splitlines()
    cu.write_text(cu.read_text().replace("undefined_value_xyz", "0.0f"))  # nvcc stops at the first error's file
    rewritten = in_candidate_terms(compile_log(["nvcc", "-c", str(cu), "-o", str(tmp_path / "cuda.o")]),
                                   generated, CUDA)
    assert f"({line_of(cu.read_text(), 'no_such_member')}) (answer line {line_of(CUDA, 'no_such_member')}): error:" \
        in rewritten
    assert f"at line {line_of(cu.read_text(), 'void launch')} (answer line {line_of(CUDA, 'void launch')})" \
        in rewritten  # `detected during instantiation ... at line N`: in the file of the error above it


def padded_answer() -> str:
    """An answer whose C++ source is its lines 30 to 60."""
    head = ["import torch", "from torch.utils.cpp_extension import load_inline", ""]
    head += [f"SCALE_{i} = {i}  # a line of Python" for i in range(len(head) + 1, 29)] + ['CPP = """\\']
    cpp = ["#include <torch/extension.h>", "", "torch::Tensor relu(torch::Tensor x) {"]
    cpp += [f"    x = x + {i};  // step {i}" for i in range(33, 59)] + ["    return x;", "}"]  # step N: line N
    assert len(head) == 29 and len(cpp) == 31
    return "\n".join([*head, *cpp, '"""', 'ext = load_inline(name="relu", cpp_sources=CPP, functions=["relu"])', ""])


def test_each_generated_line_of_the_answer_maps_to_its_own_line(generate):
    answer = padded_answer()
    main = generate(answer)["ext0_relu/main.cpp"]
    mapping = line_map("main.cpp", main, answer)
    gen, ans = main.splitlines(), answer.splitlines()
    assert ans[29] == "#include <torch/extension.h>" == gen[0] == gen[1]  # torch's include, then the answer's
    # generated 2..32 are the answer's 30..60; 33, the empty line before the binding, ends at the closing quotes
    assert mapping == {line: line + 28 for line in range(2, 34)} and ans[60] == '"""' and gen[32] == ""
    assert all(gen[g - 1] == ans[a - 1] for g, a in mapping.items() if g < 33)
    log = f"/x/ext0_relu/main.cpp:20:9: error: no match for 'operator+'\n{gen[19]}\n"
    assert in_candidate_terms(log, {"ext0_relu/main.cpp": main}, answer).startswith(
        "/x/ext0_relu/main.cpp:20:9 (answer line 48): error: no match")
    assert ans[47] == gen[19] and gen[19].endswith("// step 48")


def test_torch_s_own_lines_map_to_nothing(generate):
    answer = padded_answer() + "\n".join([
        'MORE = """', "#include <pybind11/pybind11.h>", "int seven() { return 7; }",
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {", '  m.def("seven", &seven);', "}", '"""',
        'own = load_inline(name="seven", cpp_sources=MORE, no_implicit_headers=True)', ""])
    generated = generate(answer)
    torch_main = generated["ext0_relu/main.cpp"].splitlines()
    bindings = [i for i, line in enumerate(torch_main, 1) if "PYBIND11_MODULE" in line or "m.def" in line]
    assert bindings == [len(torch_main) - 2, len(torch_main) - 1]
    mapping = line_map("main.cpp", generated["ext0_relu/main.cpp"], answer)
    assert not {1, *bindings, len(torch_main)} & set(mapping)  # the include, the bindings and their brace
    own_main = generated["ext1_seven/main.cpp"]
    own = line_map("main.cpp", own_main, answer)
    module = line_of(own_main, "PYBIND11_MODULE")
    assert own[module] == line_of(answer, "PYBIND11_MODULE") and own[module + 2] == own[module] + 2  # the answer's
    log = f"/b/ext0_relu/main.cpp:{bindings[1]}:1: error: 'relu' was not declared"
    assert in_candidate_terms(log, generated, answer) == log


WITH_HEADERS = '''from torch.utils.cpp_extension import load_inline

CUDA_SRC = """#include <cuda.h>
#include <cuda_runtime.h>
__global__ void zero(float* x) { x[threadIdx.x] = 0.0f; }
"""
ext = load_inline(name="z", cpp_sources="void zero_all(float* x);", cuda_sources=CUDA_SRC)
'''


def test_torch_s_includes_map_to_nothing_where_the_answer_writes_the_same(generate, tmp_path):
    cu = generate(WITH_HEADERS)["ext0_z/cuda.cu"]
    assert cu.splitlines()[:5] == ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>",
                                   "#include <cuda.h>", "#include <cuda_runtime.h>"]
    assert line_map("cuda.cu", cu, WITH_HEADERS) == {4: 3, 5: 4, 6: 5}  # the answer's own two, not torch's
    # lines in the answer beside a string's quotes: `CUDA_SRC = """#include <cuda.h>`, `cpp_sources="..."`
    main = generate(WITH_HEADERS, tmp_path / "again")["ext0_z/main.cpp"]
    assert main.splitlines()[1] == "void zero_all(float* x);"
    assert line_map("main.cpp", main, WITH_HEADERS) == {2: line_of(WITH_HEADERS, "zero_all")}


TWO = '''from torch.utils.cpp_extension import load_inline

A = """
int alpha(int x) {
    return x + missing_a;
}
"""
B = """
int beta(int x) {
    int y = x * 3;
    return y + missing_b;
}
"""
a = load_inline(name="a", cpp_sources=A, functions=["alpha"])
b = load_inline(name="b", cpp_sources=B, functions=["beta"])
'''


def test_two_extensions_map_to_their_own_sources(generate, tmp_path):
    generated = generate(TWO)
    assert sorted(generated) == ["ext0_a/main.cpp", "ext1_b/main.cpp"]
    a_line = line_of(generated["ext0_a/main.cpp"], "missing_a")
    b_line = line_of(generated["ext1_b/main.cpp"], "missing_b")
    log = (f"{tmp_path}/gone/ext0_a/main.cpp:{a_line}:16: error: 'missing_a' was not declared in this scope\n"
           f"{tmp_path}/gone/ext1_b/main.cpp:{b_line}:16: error: 'missing_b' was not declared in this scope\n"
           f"In file included from {tmp_path}/gone/ext1_b/main.cpp:{b_line - 1},\n")
    shutil.rmtree(tmp_path / "build")  # the build directory is gone: the log's paths still name the files
    lines = in_candidate_terms(log, generated, TWO).splitlines()
    assert lines[0].endswith(f"ext0_a/main.cpp:{a_line}:16 (answer line {line_of(TWO, 'missing_a')}): error: "
                             "'missing_a' was not declared in this scope")
    assert f"ext1_b/main.cpp:{b_line}:16 (answer line {line_of(TWO, 'missing_b')}): error" in lines[1]
    assert lines[2].endswith(f"ext1_b/main.cpp:{b_line - 1} (answer line {line_of(TWO, 'int y')}),")


FSTRING = '''from torch.utils.cpp_extension import load_inline

BLOCK = 256
KIND = "float"
CPP = f"""
#include <cstdint>
constexpr int kBlock = {BLOCK};
void scale({KIND}* x, std::int64_t n) {{
    for (std::int64_t i = 0; i < n; ++i) {{
        x[i] *= kBlock;
    }}
}}
static_assert(kBlock % 32 == 0, "a block of warps");
""" + "int tail_of_the_source = 1;\\n"
ext = load_inline(name="scaled", cpp_sources=CPP, no_implicit_headers=True)
'''


def test_a_source_built_in_python_maps_the_lines_it_wrote_as_they_are(generate):
    main = generate(FSTRING)["ext0_scaled/main.cpp"]
    gen = main.splitlines()
    mapping = line_map("main.cpp", main, FSTRING)
    unmapped = {i for i, line in enumerate(gen, 1) if i not in mapping and line.strip()}
    assert {gen[i - 1] for i in unmapped} == {"constexpr int kBlock = 256;", "void scale(float* x, std::int64_t n) {",
                                            "int tail_of_the_source = 1;"}  # filled in, or written by Python
    for generated_line, answer_line in mapping.items():
        literal = FSTRING.splitlines()[answer_line - 1].replace("{{", "{").replace("}}", "}")
        assert gen[generated_line - 1] == literal or gen[generated_line - 1] == "" and literal.endswith('"""')
    assert mapping[line_of(main, "x[i] *= kBlock")] == line_of(FSTRING, "x[i] *= kBlock")


REORDERED = '''from torch.utils.cpp_extension import load_inline

LAUNCH = """
void launch(float* x, int n) {
    scale_kernel(x, n);
}
"""
KERNEL = """
void scale_kernel(float* x, int n) {
    for (int i = 0; i < n; ++i) x[i] *= 2.0f;
}
"""
ext = load_inline(name="two_strings", cpp_sources=[KERNEL, LAUNCH], no_implicit_headers=True)
'''


def test_strings_joined_in_another_order_than_written_map_each(generate):
    main = generate(REORDERED)["ext0_two_strings/main.cpp"]
    mapping = line_map("main.cpp", main, REORDERED)
    for needle in ("void launch", "scale_kernel(x, n);", "void scale_kernel", "x[i] *= 2.0f"):
        assert mapping[line_of(main, needle)] == line_of(REORDERED, needle), needle


def test_what_names_no_line_of_the_answer_stays_as_it_was(generate):
    generated = generate(FSTRING)
    field = line_of(generated["ext0_scaled/main.cpp"], "kBlock = 256")
    log = "\n".join([
        f"/t/ext0_scaled/main.cpp:{field}:15: warning: unused",  # a line Python filled in
        "/usr/include/c++/13/bits/stl_vector.h:12:3: error: something of the library's",
        "/t/ext0_scaled/main.cpp: In function 'void scale(float*, int64_t)':",
        "/t/ext5_other/main.cpp:3:1: error: no such generated file",
        "[1/2] c++ -c /t/ext0_scaled/main.cpp -o main.o", ""])
    assert in_candidate_terms(log, generated, FSTRING) == log


def test_marking_twice_marks_once(generate):
    generated = generate(TWO)
    log = "/x/ext0_a/main.cpp:3:16: error: one\n/x/ext0_a/main.cpp:3: note: two\n/x/ext0_a/cuda.cu(3): error: x\n"
    once = in_candidate_terms(log, generated, TWO)
    assert once.count("(answer line 4)") == 2 and in_candidate_terms(once, generated, TWO) == once


def test_generated_sources_reads_the_extensions_sources_alone(tmp_path):
    (tmp_path / "ext0_a").mkdir()
    (tmp_path / "ext0_a" / "main.cpp").write_text("int a;")
    (tmp_path / "ext0_a" / "kernel.cuh").write_text("int b;")
    (tmp_path / "ext0_a" / "build.ninja").write_text("rule cxx")
    (tmp_path / "ext0_a" / "main.o").write_bytes(b"\x7fELF\0")
    (tmp_path / "ext0_a" / "linked.cpp").symlink_to(tmp_path / "ext0_a" / "main.cpp")
    (tmp_path / "torch_extensions").mkdir()
    (tmp_path / "torch_extensions" / "main.cpp").write_text("int c;")
    (tmp_path / "ext1_b").symlink_to(tmp_path / "ext0_a")
    (tmp_path / "ext2_c.cpp").write_text("int d;")
    assert generated_sources(tmp_path) == {"ext0_a/kernel.cuh": "int b;", "ext0_a/main.cpp": "int a;"}


def test_a_long_answer_and_a_long_log_are_quick():
    body = [f"    acc += x[{i % 97}] * w{i % 13};  // term {i}" if i % 5 else "}" for i in range(1900)]
    repeated = ["    acc += 1;"] * 60  # a line written many times: never a match on its own
    answer = "\n".join(["import torch", 'CPP = """', *body, *repeated, '"""', *(["x = 1"] * 40)])
    generated = {f"ext{i}_k/main.cpp": "\n".join(["#include <torch/extension.h>", *body, *repeated])
                 for i in range(3)}
    log = "\n".join(f"/gone/ext{i % 3}_k/main.cpp:{i % 1960 + 2}:5: error: {i}" if i % 2 else f"  {i} | code"
                    for i in range(10_000))
    start = time.perf_counter()
    rewritten = in_candidate_terms(log, generated, answer).splitlines()
    assert time.perf_counter() - start < 5
    assert rewritten[1] == "/gone/ext1_k/main.cpp:3:5 (answer line 4): error: 1"
    assert rewritten[3901] == "/gone/ext1_k/main.cpp:1943:5 (answer line 1944): error: 3901"  # a repeated line


def test_the_loader_gives_a_build_s_exception_the_answer_s_lines(generate, tmp_path):
    from harness.child.loader import _in_answer_lines

    generate(TWO, tmp_path / "scratch")
    (tmp_path / "candidate.py").write_text(TWO)
    exc = RuntimeError(f"Error building extension 'a': {tmp_path}/scratch/ext0_a/main.cpp:3:16: error: x")
    _in_answer_lines(exc, tmp_path / "scratch", tmp_path / "candidate.py")
    assert str(exc).endswith("main.cpp:3:16 (answer line 4): error: x") and len(exc.args) == 1
    kept = RuntimeError("Error building extension 'a': /s/ext0_a/main.cpp:3:16: error: x")
    _in_answer_lines(kept, tmp_path / "scratch", tmp_path / "no_such_answer.py")  # fails: the message stays
    assert kept.args == ("Error building extension 'a': /s/ext0_a/main.cpp:3:16: error: x",)
