"""fastbuild/host_pch.py: nvcc's host compile of a torch-header `.cu` with a precompiled head, against the truth, plain
nvcc (the same output, dependency file and object, the module id aside); and when the head is asked for, taken,
or left out."""
import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from harness.fastbuild import host_pch, maker
from harness.fastbuild.maker import make_requested_pchs, trusted_keys
from harness.fastbuild.names import PCH_DIR_ENV, PCH_FAILED, PCH_REQUESTS_ENV, PCH_TRUSTED_ENV
from harness.process import CHILD, child_env

NVCC = shutil.which("nvcc")
FLAGS = ["-DTORCH_API_INCLUDE_EXTENSION_H", "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "-fPIC",
         "-O3", "-std=c++17"]
CUDA_CU = ("#include <torch/types.h>\n\n#include <cuda_runtime.h>\n#include <torch/extension.h>\n#include <vector>\n"
           "__global__ void relu_kernel(const float* x, float* y, int64_t n) {\n"
           "    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
           "    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;\n}\n"
           "torch::Tensor relu(torch::Tensor x) {\n    auto y = torch::empty_like(x);\n"
           "    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());\n"
           "    return y;\n}\n")


@pytest.fixture
def pch_env(tmp_path, monkeypatch):
    monkeypatch.setenv(PCH_DIR_ENV, str(tmp_path / "pch"))
    monkeypatch.setenv(PCH_REQUESTS_ENV, str(tmp_path / "requests.jsonl"))
    monkeypatch.setenv(PCH_TRUSTED_ENV, "")
    return tmp_path


def requests(tmp_path: Path) -> list[dict]:
    path = tmp_path / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def test_the_flag_set_leaves_out_what_names_the_build_s_files_and_the_extension():
    args = ["-MD", "-MF", "/b/cuda.cuda.o.d", "-DTORCH_EXTENSION_NAME=mine", "-DX=1", "-O3", "-c", "/b/cuda.cu",
            "-o", "cuda.cuda.o"]
    assert host_pch.normalized(args) == ["-DX=1", "-O3"]
    assert host_pch.normalized([*args[:-2], "/b/other.cu"]) is None  # two sources: not one flag set's build
    assert host_pch.key("nvcc", ["-O3"]) != host_pch.key("nvcc", ["-O2"])
    assert re.fullmatch(r"_[0-9a-f]{8}_7_cuda_cu_[0-9a-f]{8}", host_pch.module_id(host_pch.key("nvcc", ["-O3"])))


def test_the_key_names_the_toolchain_as_it_is_now(tmp_path, monkeypatch):
    """An upgraded nvcc, host compiler or torch gives another key (a header made anew), and nothing else does."""
    nvcc, compiler = tmp_path / "cuda" / "nvcc", tmp_path / "bin" / "gcc"
    header = tmp_path / "site" / "torch" / "include" / "torch" / "extension.h"
    for path in (nvcc, compiler, header):
        path.parent.mkdir(parents=True)
        path.write_text("1")
    flags = ["-ccbin", str(compiler.parent), "-isystem", str(header.parent.parent), "-O3"]
    keys = {host_pch.key(str(nvcc), flags)}
    assert host_pch.key(str(nvcc), flags) in keys  # the same files: the same key
    monkeypatch.setenv("NVCC_CCBIN", str(tmp_path / "elsewhere"))  # -ccbin stands over it, as in nvcc
    assert host_pch.key(str(nvcc), flags) in keys
    for path in (nvcc, compiler, header):
        path.write_text("22")  # upgraded
        keys.add(host_pch.key(str(nvcc), flags))
    assert len(keys) == 4
    assert host_pch.toolchain("nvcc", [f"-I{header.parent.parent}", "-ccbin=/opt/cc/g++"])[1:] == [
        "/opt/cc/g++", str(header)]


def test_a_header_is_asked_for_then_taken_only_once_trusted(pch_env, monkeypatch):
    source = pch_env / "cuda.cu"
    args = ["-O3", "-c", str(source), "-o", "cuda.o"]
    for text in ("#include <torch/types.h>\n#include <cuda_runtime.h>\n",  # no torch/extension.h
                 "#include <cuda_runtime.h>\n#include <torch/extension.h>\n"):  # no_implicit_headers=True
        source.write_text(text)
        assert host_pch.header_for("nvcc", args, str(source)) is None and requests(pch_env) == []
    source.write_text(CUDA_CU)
    assert host_pch.header_for("nvcc", args, str(source)) is None  # not made yet: asked for
    (asked,) = requests(pch_env)
    assert asked["command"] == [host_pch.JOB, "nvcc", "-O3"] and asked["make"] == host_pch.key("nvcc", ["-O3"])
    directory = pch_env / "pch" / asked["make"]
    directory.mkdir(parents=True)
    (directory / host_pch.PREFIX).write_text("int a;\n")
    assert host_pch.header_for("nvcc", args, str(source)) is None  # made, but its seal not checked by the parent
    monkeypatch.setenv(PCH_TRUSTED_ENV, asked["make"])
    assert host_pch.header_for("nvcc", args, str(source)) == host_pch.Header(asked["make"], directory)
    (directory / PCH_FAILED).write_text("retired\n")
    assert host_pch.header_for("nvcc", args, str(source)) is None


def test_the_shared_text_is_replaced_only_where_the_output_starts_with_it(pch_env):
    directory = pch_env / "header"
    directory.mkdir()
    prefix = b'#pragma GCC diagnostic ignored "-Wattributes"\n# 3 "/h/a.h" 3\nint a;\n'
    (directory / host_pch.PREFIX).write_bytes(prefix)
    cudafe = pch_env / "cuda.cudafe1.cpp"
    header = host_pch.Header("k", directory)
    for text, fits in ((b'# 1 "/b/cuda.cu"\n' + prefix + b'# 7 "/b/cuda.cu"\nint b;\n', True),
                       (b'# 1 "/b/cuda.cu"\n' + prefix + b"int b;\n", False),  # no line marker after it
                       (b'# 1 "/b/cuda.cu"\n' + prefix.replace(b"a;", b"c;") + b'# 7 "/b/cuda.cu"\n', False),
                       (prefix + b'# 7 "/b/cuda.cu"\nint b;\n', False)):  # no main file's marker first
        cudafe.write_bytes(text)
        assert (host_pch.rewrite(cudafe, directory) == text) is fits
        if not fits:
            assert cudafe.read_bytes() == text
            continue
        include = b'#include "' + os.fsencode(directory / host_pch.PREFIX) + b'"\n'
        assert cudafe.read_bytes() == text.replace(prefix, include)
        for command, status in (("true", 0), ("echo a warning", None), ("exit 1", None)):
            cudafe.write_bytes(text)
            assert host_pch.compile_with(header, cudafe, command, dict(os.environ)) == status
            assert (cudafe.read_bytes() == text) is (status is None)  # put back for the compile without it
    assert requests(pch_env) == [{"use": "k"}]


def _normalized_object(path: Path) -> bytes:
    """The module id aside, and the name nvcc gives its host source (from its process id)."""
    data = re.sub(rb"tmpxft_[0-9a-f]{8}_00000000", b"tmpxft_XXXXXXXX_00000000", path.read_bytes())
    return re.sub(rb"_[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}", b"MODULE_ID", data)


@pytest.mark.slow  # three torch-header nvcc compiles, 5-9 min on the 2-core CI machine: the build's own truth
@pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
def test_a_torch_header_cu_compiled_with_its_host_header_is_plain_nvccs(pch_env, monkeypatch):
    """The whole path, as a build takes it: the driver asks, the parent has the header made and sealed, the next
    build takes it; each build's output, dependency file and object are plain nvcc's."""
    from torch.utils.cpp_extension import include_paths

    includes = [arg for path in [*include_paths(), sysconfig.get_paths()["include"]] for arg in ("-isystem", path)]
    (pch_env / "cuda.cu").write_text(CUDA_CU)

    def build(name: str, prefix: list[str]) -> tuple[int, str]:
        args = ["-MD", "-MF", f"{name}.d", f"-DTORCH_EXTENSION_NAME={name}", *FLAGS, *includes, "-c",
                str(pch_env / "cuda.cu"), "-o", f"{name}.o"]
        done = subprocess.run([*prefix, *args], cwd=pch_env, env=child_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        return done.returncode, done.stdout

    driver = [*CHILD, "nvcc", "--one-chain", "--host-pch", NVCC]
    assert host_pch.header_for(NVCC, ["-DTORCH_EXTENSION_NAME=first", *FLAGS, *includes, "-c",
                                      str(pch_env / "cuda.cu"), "-o", "x.o"], str(pch_env / "cuda.cu")) is None
    # made by its own child, then sealed; the header's fidelity is tested here, not how fast a loaded machine makes it
    monkeypatch.setattr(maker, "PCH_TIMEOUT_S", 3600.0)
    make_requested_pchs(pch_env / "requests.jsonl", None)
    keys = trusted_keys()
    logs = [log.read_text()[-2000:] for log in (pch_env / "pch").glob("*/make.log")]
    assert len(keys) == 1, f"no host header was made and sealed: {keys}, its logs: {logs}"
    (key,) = keys
    (pch_env / "requests.jsonl").unlink()
    monkeypatch.setenv(PCH_TRUSTED_ENV, key)
    assert build("by_nvcc", [NVCC]) == build("by_driver", driver) == (0, "")
    assert requests(pch_env) == [{"use": key}]  # the host compile took the header
    assert _normalized_object(pch_env / "by_driver.o") == _normalized_object(pch_env / "by_nvcc.o")
    depfile = (pch_env / "by_driver.d").read_text()
    assert depfile.replace("by_driver.o", "by_nvcc.o", 1) == (pch_env / "by_nvcc.d").read_text()


def test_shared_text_whose_pragmas_outlive_it_makes_no_header():
    silent = b'#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored "-Wattributes"\n#pragma GCC diagnostic pop\n'
    balanced = b"#pragma GCC visibility push(default)\nint a;\n#pragma GCC visibility pop\n"
    assert host_pch.carried_state(silent + balanced) is None
    for carried in (b'#pragma GCC diagnostic warning "-Wall"\n', b"#pragma pack(push, 1)\n",
                    b"#pragma GCC optimize(\"O0\")\n", b"#pragma GCC visibility push(default)\n"):
        assert host_pch.carried_state(silent + carried + balanced) is not None, carried


@pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
def test_nvcc_s_command_is_torch_s_own_whether_main_cpp_takes_its_pch_or_not(pch_env, monkeypatch):
    """The precompiled torch/extension.h is for main.cpp alone: the `.cu`'s nvcc flags, and with them its host
    header's key, are the same before and after that PCH is made (in nvcc's include path, it gave every build
    after the first a host header key of its own, never made in time)."""
    import inspect

    import torch.utils.cpp_extension as cpp_ext

    from harness.fastbuild import hooks, pch
    from harness.fastbuild.maker import seal_pch

    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setattr(cpp_ext, "CUDA_HOME", str(Path(NVCC).resolve().parent.parent))  # None in a CPU torch
    variables = []

    def load_inline(*args, **kwargs):  # what torch writes in build.ninja for the call it is given
        arguments = inspect.signature(cpp_ext.load_inline).bind(*args, **kwargs).arguments
        variables.append(pch._ninja_variables(cpp_ext, arguments.get("extra_cflags") or [],
                                              arguments.get("extra_include_paths") or [], True, False))

    def build() -> None:
        bound = inspect.signature(cpp_ext.load_inline).bind(
            "relu", "torch::Tensor relu(torch::Tensor x);", CUDA_CU, functions=["relu"], extra_cflags=["-O1"])
        hooks.build_extension(cpp_ext, load_inline, bound, pch_env / "build", with_pch=True)

    build()  # no PCH yet: asked for
    (asked,) = requests(pch_env)
    directory = pch_env / "pch" / asked["make"]
    (directory / "torch").mkdir(parents=True)
    (directory / pch.PCH_FILE).write_bytes(b"gch")
    seal_pch(directory)
    monkeypatch.setenv(PCH_TRUSTED_ENV, asked["make"])
    build()  # with it
    without, with_pch = variables
    assert "-gencode=arch=compute_90" in without["cuda_cflags"]
    assert with_pch["cuda_cflags"] == without["cuda_cflags"]
    assert with_pch["cflags"] == f"{without['cflags']} -I{directory}"
