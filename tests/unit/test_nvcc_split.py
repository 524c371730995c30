"""fastbuild/nvcc_split.py against the truth, plain nvcc: for each source and flag set, the same exit status, the same
output (nvcc's intermediate files' random names aside), the same dependency file and the same object (those names
and the module id aside); and its plan, read from nvcc's own dry run."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.eval.build_cost import TORCH_HEADERS, expected_build_cost
from harness.fastbuild import front_ends, nvcc_plan
from harness.fastbuild.front_ends import FrontEnds
from harness.fastbuild.hooks import nvcc_driver
from harness.process import CHILD, child_env

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
DRIVER = [*CHILD, "nvcc"]
ARCH = ["-gencode=arch=compute_90,code=sm_90"]

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\nvoid launch(float* x) { k<<<1, 32>>>(x); }\n"
SOURCES = {
    "ok": KERNEL,
    "host_error": "__global__ void k(float* x) { x[0] = 1.f }\n",  # cudafe++ fails first: cicc's output is not nvcc's
    "device_only_error": KERNEL + "#ifdef __CUDA_ARCH__\n#error device side only\n#endif\n",
    "ptxas_error": KERNEL + '__device__ void f() { asm("bogus;"); }\n__global__ void g() { f(); }\n',
    "warnings": "#warning from the preprocessor\n" + KERNEL.replace("1.f;", "1.f; int unused;"),
    "anonymous": "namespace {\n" + KERNEL.replace("void launch", "}\nvoid launch"),
    "host_only_error": KERNEL + "#ifndef __CUDA_ARCH__\nstatic_assert(false, \"host side only\");\n#endif\n",
}
FLAGS = {
    "one arch": ARCH,
    "two archs, PTX too": ["-gencode=arch=compute_90,code=sm_90", "-gencode=arch=compute_80,code=compute_80"],
    "ptxas verbose, fast math": [*ARCH, "-Xptxas", "-v", "--use_fast_math", "-lineinfo"],
}


def run(command: list[str], cwd: Path, merged: bool) -> tuple[int, str, str]:
    done = subprocess.run(command, cwd=cwd, env=child_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merged else subprocess.PIPE)
    return done.returncode, _names(done.stdout.decode()), _names((done.stderr or b"").decode())


def _names(text: str) -> str:
    """nvcc's intermediate files are named by its process id, in TMPDIR (the driver's own directory); ptxas -v
    says how long it took."""
    text = re.sub(r"Compile time = [0-9.]+ ms", "Compile time = T ms", text)
    return re.sub(r"/\S*/tmpxft_[0-9a-f]{8}_", "TMP/tmpxft_", text)


def _object(path: Path) -> bytes:
    data = re.sub(rb"tmpxft_[0-9a-f]{8}_00000000", b"tmpxft_XXXXXXXX_00000000", path.read_bytes())
    return re.sub(rb"_[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}", b"MODULE_ID", data)


def compile_both(work: Path, source: str, flags: list[str], merged: bool, depfile: bool, nvcc: str = NVCC):
    """Plain nvcc, then the driver (given `nvcc`), in one directory (-lineinfo writes it into the object): each
    one's status, output, and where its files were put."""
    (work / "kernel.cu").write_text(source)
    results = []
    for name, prefix in (("plain", [NVCC]), ("split", [*DRIVER, nvcc])):
        deps = ["-MD", "-MF", "kernel.o.d"] if depfile else []
        status, out, err = run([*prefix, *deps, *flags, "-O3", "-c", "kernel.cu", "-o", "kernel.o"], work, merged)
        kept = work / name
        kept.mkdir()
        for made in ("kernel.o", "kernel.o.d"):
            if (work / made).exists():
                (work / made).rename(kept / made)
        results.append((status, out, err, kept))
    return results


@needs_nvcc
@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("case", list(SOURCES))
def test_the_split_build_is_plain_nvccs(tmp_path, case, flags):
    merged, depfile = case != "warnings", case in ("ok", "warnings", "anonymous")  # ninja merges the streams
    (status, out, err, plain), (split_status, split_out, split_err, split) = compile_both(
        tmp_path, SOURCES[case], FLAGS[flags], merged, depfile)
    assert (split_status, split_out, split_err) == (status, out, err)
    assert ((status == 0) == (case in ("ok", "warnings", "anonymous")))
    if status != 0:
        assert not (split / "kernel.o").exists()
        return
    if depfile:
        assert (split / "kernel.o.d").read_text() == (plain / "kernel.o.d").read_text()
    if case == "anonymous" and "compute_80" in " ".join(FLAGS[flags]):
        return  # the fatbin's PTX names the anonymous namespace by the module id, and is compressed
    assert _object(split / "kernel.o") == _object(plain / "kernel.o")


@needs_nvcc
def test_anonymous_namespaces_take_the_module_id_and_keep_their_symbols(tmp_path):
    (_, _, _, plain), (_, _, _, split) = compile_both(tmp_path, SOURCES["anonymous"], FLAGS["two archs, PTX too"],
                                                     True, False)

    def symbols(kept: Path) -> list[str]:
        listing = subprocess.run(["nm", "kernel.o"], cwd=kept, capture_output=True, text=True, check=True).stdout
        return sorted(re.sub(r"_[0-9a-f]{8}_\d+_kernel_cu_[0-9a-f]{8}", "ID", line.split()[-1])
                      for line in listing.splitlines())

    assert symbols(split) == symbols(plain) and any("ID" in name for name in symbols(split))


@needs_nvcc
def test_its_plan_runs_the_front_ends_apart_and_keeps_nvccs_order(tmp_path):
    (tmp_path / "kernel.cu").write_text(KERNEL)
    args = ["-MD", "-MF", "kernel.o.d", *FLAGS["two archs, PTX too"], "-c", "kernel.cu", "-o", "kernel.o"]
    dry = subprocess.run([NVCC, "--dryrun", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    lines = [line[3:] for line in dry.stderr.splitlines() if line.startswith("#$ ")]
    plan = nvcc_plan.plan(lines, nvcc_plan.dependencies(NVCC, args))
    host, device = plan.chains
    assert [nvcc_plan._tool(step.command) for step in host][1] == "cudafe++"
    assert "--gen_module_id_file" not in host[1].command  # it reads ours, as cicc does
    assert [nvcc_plan._tool(step.command) for step in device].count("cicc") == 2
    assert nvcc_plan._tool(device[-1].command) == "fatbinary"
    # nvcc's filter comes after the three preprocessings (two archs, then the host) and reads them in that order
    assert len(plan.preprocessed) == 3 and plan.preprocessed[-1] == nvcc_plan._output(host[0].command)
    assert plan.filter_index == host[0].index + 1 < host[1].index
    indices = sorted([plan.filter_index, *(step.index for chain in plan.chains for step in chain)])
    assert indices == list(range(len(indices)))  # every step before the host compile, once
    assert nvcc_plan._is_compile(plan.finish[-1].command)
    assert plan.env["CICC_PATH"] and "PATH" in plan.env


@needs_nvcc
@pytest.mark.parametrize("flags", [["-rdc=true"], ["--keep"], ["-t", "2"], ["-t2"], ["--ptx"], ["-MMD"]])
def test_what_it_does_not_recognise_runs_plain_nvcc(tmp_path, flags):
    assert nvcc_plan.is_plain(flags, {})
    assert nvcc_plan.is_plain([], {"NVCC_APPEND_FLAGS": " ".join(flags)})
    assert not nvcc_plan.is_plain(["-MD", "-MF", "x.d", *ARCH, "-O3"], {})
    (tmp_path / "kernel.cu").write_text(KERNEL)
    out = tmp_path / ("kernel.ptx" if "--ptx" in flags else "kernel.o")
    compile_ = [] if "--ptx" in flags else ["-c"]
    done = subprocess.run([*DRIVER, NVCC, *flags, *ARCH, *compile_, "kernel.cu", "-o", out.name], cwd=tmp_path,
                          env=child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.is_file()


@needs_nvcc
def test_a_plan_of_another_shape_is_not_split(tmp_path):
    (tmp_path / "kernel.cu").write_text(KERNEL)
    args = [*ARCH, "-rdc=true", "-c", "kernel.cu", "-o", "kernel.o"]
    dry = subprocess.run([NVCC, "--dryrun", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    lines = [line[3:] for line in dry.stderr.splitlines() if line.startswith("#$ ")]
    assert nvcc_plan.plan(lines, None) is None  # cicc --device-c: the module id links objects together
    linked = [*ARCH, "kernel.cu", "-o", "kernel"]  # compiled and linked: nvlink and the host link follow
    dry = subprocess.run([NVCC, "--dryrun", *linked], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert nvcc_plan.plan([line[3:] for line in dry.stderr.splitlines() if line.startswith("#$ ")], None) is None


def test_the_dependency_command_is_nvccs_own_minus_the_compile():
    args = ["-MD", "-MF", "o.d", "-DX=1", "-c", "/b/k.cu", "-o", "k.o", "-O3"]
    assert nvcc_plan.dependencies("nvcc", args) == nvcc_plan.Dependencies(
        "o.d", "k.o", "/b/k.cu", ["nvcc", "-M", "-MT", "k.o", "-MF", "o.d", "-DX=1", "/b/k.cu", "-O3"])
    assert nvcc_plan.dependencies("nvcc", ["-MD", "-c", "k.cu", "-o", "k.o"]) is None  # no file named
    assert nvcc_plan.dependencies("nvcc", ["-MD", "-MF", "o.d", "-c", "k.cu", "-o=k.o"]) is None


# Sources whose dependency file nvcc writes from its preprocessed files in a way worth pinning down: headers only
# some passes read, headers read twice or empty, a directory with a space, and raw strings holding lines that look
# like line markers (nvcc lists `# 1 "NAME"` ones, gcc's form or not: the driver reads gcc's form and asks nvcc's
# -M about any other).
HEADERS = {"empty.h": "", "once.h": "#pragma once\nint once_v;\n",
           "guarded.h": "#ifndef G\n#define G\nint g;\n#endif\n", "sp ace/spaced.h": "int spaced_v;\n"}
DEPENDENCY_SOURCES = {
    "per_pass_headers": ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n#include <cassert>\n#endif\n"
                         "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n#include <climits>\n#endif\n"
                         "#ifndef __CUDA_ARCH__\n#include <cfloat>\n#endif\n" + KERNEL),
    "headers_twice_and_empty": ('#include "empty.h"\n#include "once.h"\n#include "once.h"\n#include "guarded.h"\n'
                                '#include "guarded.h"\n#include "spaced.h"\n' + KERNEL),
    "gcc_form_markers_in_a_raw_string": ('const char* s = R"(\n# 1 "/a.h" 1\n# 1 "/d.h" 3 4\n# 3 "/c.h"\n'
                                         '# 0 "/z.h"\n)";\n' + KERNEL),
    "other_markers_in_a_raw_string": 'const char* s = R"(\n#1 "/e.h"\n  # 1 "/j.h"\n# 1 "/i.h"junk\n)";\n' + KERNEL,
}


@needs_nvcc
@pytest.mark.parametrize("case", list(DEPENDENCY_SOURCES))
def test_the_dependency_file_is_nvccs(tmp_path, case):
    for name, text in HEADERS.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    logged = tmp_path / "nvcc-calls"
    logging_nvcc = tmp_path / "nvcc"
    logging_nvcc.write_text(f'#!/bin/sh\necho "$*" >> "{logged}"\nexec "{NVCC}" "$@"\n')
    logging_nvcc.chmod(0o755)
    flags = ["-gencode=arch=compute_90,code=sm_90", "-gencode=arch=compute_80,code=sm_80", "-I", "sp ace"]
    (status, out, err, plain), (split_status, split_out, split_err, split) = compile_both(
        tmp_path, DEPENDENCY_SOURCES[case], flags, True, True, str(logging_nvcc))
    assert (split_status, split_out, split_err) == (status, out, err) and status == 0, out
    assert (split / "kernel.o.d").read_text() == (plain / "kernel.o.d").read_text()
    asked = [call for call in logged.read_text().splitlines() if call.startswith("-M ")]
    assert len(asked) == (case == "other_markers_in_a_raw_string")  # nvcc's -M preprocesses everything again


def _preprocessed(tmp_path: Path, text: str) -> str:
    (tmp_path / "x.ii").write_bytes(text.encode())
    return str(tmp_path / "x.ii")


def test_the_dependency_file_is_derived_from_gcc_s_markers_and_asked_of_nvcc_otherwise(tmp_path):
    deps = nvcc_plan.Dependencies("k.o.d", "k.o", "k.cu", [])
    gcc = '# 0 "k.cu"\n# 0 "<built-in>"\n# 1 "/usr/a b.h" 1 3 4\n# 9 "/c.h"\nint x;\n# 1 "k.cu"\n# 1 "/d.h" 2\n'
    assert nvcc_plan.derived_dependencies(deps, [_preprocessed(tmp_path, gcc)]) == (
        "k.o : k.cu \\\n    /usr/a\\ b.h \\\n    /d.h\n")
    for odd in ('  # 1 "/j.h"\n', '#1 "/e.h"\n', '# 1 "/i.h"junk\n', '# 1 "/q\\"h"\n', '# 1 "<built-in>"\n',
                '# 1 "/$.h"\n'):
        assert nvcc_plan.derived_dependencies(deps, [_preprocessed(tmp_path, gcc + odd)]) is None, odd
    assert nvcc_plan.derived_dependencies(deps, [_preprocessed(tmp_path, '# 0 "k.cu"\nint x;\n')]) is None


def test_the_module_id_is_nvccs_form_and_unique_to_the_source(tmp_path):
    source = tmp_path / "cuda.cu"
    source.write_text(KERNEL)
    first = nvcc_plan.module_id(str(source), ["-O3"])
    assert re.fullmatch(r"_[0-9a-f]{8}_7_cuda_cu_[0-9a-f]{8}", first)
    assert nvcc_plan.module_id(str(source), ["-O3"]) == first
    assert nvcc_plan.module_id(str(source), ["-O2"]) != first
    source.write_text(KERNEL + "\n")
    assert nvcc_plan.module_id(str(source), ["-O3"]) != first


class FakeExtensions:
    """torch.utils.cpp_extension's three names the loader reads for this (CUDA_HOME is unset in a CPU build)."""
    IS_HIP_EXTENSION = False

    def __init__(self, home: str | None, wrapper: str | None = None):
        self.home, self.wrapper = home, wrapper

    def _join_cuda_home(self, *parts):
        if self.home is None:
            raise OSError("CUDA_HOME environment variable is not set")
        return os.path.join(self.home, *parts)

    def _wrap_compiler(self, compiler):
        return [self.wrapper, compiler] if self.wrapper else [compiler]


def test_the_build_child_points_torch_at_the_driver_where_it_splits_or_may_take_a_host_header(monkeypatch):
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    monkeypatch.setenv("HARNESS_SPLIT_NVCC", "1")
    for sole_cu, options in ((False, ""), (True, " --host-pch")):
        with nvcc_driver(FakeExtensions("/opt/cuda"), building=True, sole_cu=sole_cu):
            command = os.environ["PYTORCH_NVCC"]
        assert command.endswith(f"-m harness.child nvcc{options} /opt/cuda/bin/nvcc")
        assert "PYTORCH_NVCC" not in os.environ
    for extensions, building in ((FakeExtensions("/opt/cuda"), False),  # a build at evaluation time
                                 (FakeExtensions(None), True),  # no CUDA
                                 (FakeExtensions("/opt/cuda", wrapper="ccache"), True)):  # torch would use ccache
        with nvcc_driver(extensions, building, sole_cu=True):
            assert "PYTORCH_NVCC" not in os.environ
    monkeypatch.setenv("PYTORCH_NVCC", "my-nvcc")  # the user's (or the candidate's) stands
    with nvcc_driver(FakeExtensions("/opt/cuda"), building=True, sole_cu=True):
        assert os.environ["PYTORCH_NVCC"] == "my-nvcc"
    monkeypatch.delenv("PYTORCH_NVCC")
    monkeypatch.delenv("HARNESS_SPLIT_NVCC")  # no second core: one chain, and only for a host header
    with nvcc_driver(FakeExtensions("/opt/cuda"), building=True, sole_cu=False):
        assert "PYTORCH_NVCC" not in os.environ
    with nvcc_driver(FakeExtensions("/opt/cuda"), building=True, sole_cu=True):
        assert os.environ["PYTORCH_NVCC"].endswith("nvcc --one-chain --host-pch /opt/cuda/bin/nvcc")


def test_splits_are_granted_to_torch_header_builds_while_cores_and_memory_are_free(monkeypatch):
    heavy = 'load_inline(name="x", cpp_sources="", cuda_sources=CUDA)'
    assert expected_build_cost(heavy) == TORCH_HEADERS
    monkeypatch.setattr(front_ends, "usable_cores", lambda: 8)
    monkeypatch.setattr(front_ends, "meminfo_bytes", lambda field: 64 << 30)
    monkeypatch.setattr(front_ends.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    grants = FrontEnds()
    with grants.build(expected_build_cost("import torch\n") >= TORCH_HEADERS) as lean:
        assert not lean  # nothing to split: no slot taken
        granted = []
        with grants.build(True) as a, grants.build(True) as b, grants.build(True) as c:
            granted = [a, b, c]
            with grants.build(True) as d:  # 5 builds and 3 splits: a fourth split would need a 9th core
                granted.append(d)
        assert granted == [True, True, True, False]
    assert (grants.running, grants.splits) == (0, 0)
    monkeypatch.setattr(front_ends.os, "getloadavg", lambda: (7.5, 0.0, 0.0))  # another user's load
    with grants.build(True) as split:
        assert not split
    monkeypatch.setattr(front_ends.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(front_ends, "meminfo_bytes", lambda field: 10 << 30)  # 8 GiB kept free, 3 GiB a split
    with grants.build(True) as split:
        assert not split
    monkeypatch.setattr(front_ends, "meminfo_bytes", lambda field: None)
    with grants.build(True) as split:
        assert not split


FAKE_NVCC = r'''#!/bin/sh
# A stand-in nvcc: its dry run plans a split compile whose cudafe++ dies of SIGKILL; run for real, it compiles.
here=$(dirname "$0")
t="$TMPDIR/k"
case " $* " in
  *" --dryrun "*)
    echo "#\$ PATH=$here:$PATH" >&2
    echo "#\$ cc -E -x c++ k.cu -o \"$t.cpp4.ii\"" >&2
    id="--gen_module_id_file --module_id_file_name \"$t.id\""
    echo "#\$ cudafe++ --gen_c_file_name \"$t.cudafe1.cpp\" $id \"$t.cpp4.ii\"" >&2
    echo "#\$ cc -E -x c++ k.cu -o \"$t.cpp1.ii\"" >&2
    echo "#\$ cicc --module_id_file_name \"$t.id\" \"$t.cpp1.ii\" -o \"$t.ptx\"" >&2
    echo "#\$ fatbinary --embedded-fatbin=\"$t.fatbin.c\"" >&2
    echo "#\$ rm \"$t.fatbin\"" >&2
    echo "#\$ cc -c -x c++ \"$t.cudafe1.cpp\" -o k.o" >&2 ;;
  *) echo plain > k.o ;;
esac
'''


def test_a_front_end_killed_by_a_signal_gets_plain_nvccs_answer(tmp_path):
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, body in (("nvcc", FAKE_NVCC), ("cudafe++", "#!/bin/sh\ntouch cudafe-ran\nkill -KILL $$\n"),
                       ("cicc", "#!/bin/sh\nsleep 0.2\n"), ("fatbinary", "#!/bin/sh\n")):
        (tools / name).write_text(body)
        (tools / name).chmod(0o755)
    (tmp_path / "k.cu").write_text(KERNEL)
    done = subprocess.run([*DRIVER, str(tools / "nvcc"), "-c", "k.cu", "-o", "k.o"], cwd=tmp_path, env=child_env(),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cudafe-ran").is_file()  # the split ran, and cudafe++ died in it
    assert (tmp_path / "k.o").read_text() == "plain\n"  # then nvcc's own run, not the half-done split
