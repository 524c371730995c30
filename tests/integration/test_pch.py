"""The precompiled torch/extension.h: asked for by a sandboxed build child, made once per flag set by a child of
its own, used by the next builds with those flags, never fatal."""
import json
import os
import threading
from pathlib import Path

import pytest
import torch
from torch.utils.cpp_extension import _import_module_from_library

from harness.device import discover
from harness.eval.build import BuildOptions, build
from harness.eval.candidate import candidate_from_source
from harness.eval.confine import Confinement
from harness.fastbuild.maker import MadeLater, trusted_keys
from harness.fastbuild.names import PCH_FAILED, PCH_FILE, PCH_RETRY
from harness.types import DeviceInfo
from tests.plain_torch import normalized_errors

CANDIDATE = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{header}
torch::Tensor scaled_relu(torch::Tensor x) {{
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) o[i] = in[i] > 0.f ? {scale}f * in[i] : 0.f;
    return out;
}}
"""

ext = load_inline(name="scaled_relu_{tag}", cpp_sources=CPP, functions=["scaled_relu"], extra_cflags={flags!r},
                  no_implicit_headers={lean})


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.scaled_relu(x)
'''
BROKEN = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
torch::Tensor scaled_relu(torch::Tensor x) {{
    auto out = torch::empty_like(x);
    return out * undeclared_scale_xyz;
}}
"""

ext = load_inline(name="broken_{tag}", cpp_sources={sources}, functions=["scaled_relu"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.scaled_relu(x)
'''
# -H prints each header the compiler reads, a precompiled one as "! path" when valid and "x path" when not
REPORTING_FLAGS = ["-O2", "-Winvalid-pch", "-H"]


@pytest.fixture(autouse=True)
def pch_dir(tmp_path, monkeypatch):
    """PCHs are shared by every results directory (~/.cache/kernel-harness/pch): each test gets its own."""
    monkeypatch.setenv("HARNESS_PCH_DIR", str(tmp_path / "pch"))


def build_scaled_relu(cache: Path, tag: str, scale: float, flags: list[str], lean: bool = False,
                      device: DeviceInfo | None = None, made_later: MadeLater | None = None):
    # lean: no implicit headers, torch/extension.h included first by the source itself (the prompts' shape)
    source = CANDIDATE.format(tag=tag, scale=scale, flags=flags, lean=lean,
                              header="\n// the binding\n#include <torch/extension.h>" if lean else "")
    sandboxed = BuildOptions(timeout_s=600, confinement=Confinement(hidden=()))
    result = build(candidate_from_source(source), device or discover("cpu"), cache, sandboxed, made_later=made_later)
    assert result.status == "ok", result.log[-3000:]
    return result


def imported_extension(result):
    entry = json.loads((Path(result.directory) / "manifest.json").read_text())[0]
    return _import_module_from_library(entry["module"], entry["dir"], True)


def makers_policies(under: Path, stop: threading.Event, seen: dict[int, bool]) -> None:
    """Whether each PCH maker of a directory `under` (`python -m harness.child pch DIR`, not the sandbox's processes
    that start it and wait) runs under SCHED_IDLE, as last seen (a child lowers its own policy as it starts)."""
    while not stop.wait(0.05):
        for entry in Path("/proc").iterdir():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if argv[1:4] == [b"-m", b"harness.child", b"pch"] and argv[4].startswith(bytes(under)):
                    seen[int(entry.name)] = os.sched_getscheduler(int(entry.name)) == os.SCHED_IDLE
            except (OSError, ValueError, IndexError):
                continue


def test_a_header_asked_for_is_made_once_beside_the_evaluations_yielding_the_cores_and_read_by_later_builds(
        tmp_path):
    """A GPU batch's builds hand the headers they ask for to its MadeLater (scheduler.py): the build returns before the
    header is made, so its candidate is evaluated meanwhile (not 1-2 minutes later), and the maker yields the cores as
    builds beside evaluations do. Once made and sealed, the next builds with the same flags read it instead of parsing
    torch's headers (a source that includes torch/extension.h itself too), and nothing makes it again."""
    gpu = DeviceInfo(target="cuda", name="a GPU this machine need not have", index=0)
    made_later, stop, seen = MadeLater(), threading.Event(), {}
    watch = threading.Thread(target=makers_policies, args=(tmp_path, stop, seen))
    watch.start()
    try:
        first = build_scaled_relu(tmp_path, "a", 2.0, REPORTING_FLAGS, device=gpu, made_later=made_later)
        assert "for these flags is not made yet" in first.log
        assert trusted_keys() == []  # the build is done, its header still being made
        made_later.finish()
    finally:
        stop.set()
        watch.join()
    assert seen and all(seen.values()), seen  # a maker was seen, under SCHED_IDLE
    [pch] = tmp_path.rglob(PCH_FILE.name)
    assert len(trusted_keys()) == 1  # made, sealed: builds take it
    built = pch.stat()
    assert f"! {pch}" not in first.log

    second = build_scaled_relu(tmp_path, "b", 3.0, REPORTING_FLAGS, lean=True)
    third = build_scaled_relu(tmp_path, "d", 4.0, REPORTING_FLAGS)
    assert list(tmp_path.rglob(PCH_FILE.name)) == [pch]
    assert (pch.stat().st_ino, pch.stat().st_mtime_ns) == (built.st_ino, built.st_mtime_ns)  # made once
    for result in (second, third):
        assert f"! {pch}" in result.log  # GCC read the PCH instead of parsing the header
        assert "not used because" not in result.log  # -Winvalid-pch's complaint
    x = torch.randn(1000)
    for result, scale in ((first, 2.0), (second, 3.0), (third, 4.0)):
        assert torch.equal(imported_extension(result).scaled_relu(x), scale * x.clamp_min(0))


def test_flags_the_header_does_not_precompile_with_build_without_it(tmp_path):
    # Compiled as the main file, torch/extension.h warns "#pragma once in main file": an error under
    # -Werror, raised at once under -Wfatal-errors. Its main.cpp, which only includes the header, compiles.
    result = build_scaled_relu(tmp_path, "c", 2.0, ["-O2", "-Werror", "-Wfatal-errors"])
    [failed] = tmp_path.rglob(PCH_FAILED)
    assert "pragma once in main file" in failed.read_text()
    assert not list(tmp_path.rglob(PCH_FILE.name))
    x = torch.randn(1000)
    assert torch.equal(imported_extension(result).scaled_relu(x), 2.0 * x.clamp_min(0))


# A PCH of its own and four torch-header builds (300 s of the loaded CI machine): in CI the shapes matrix holds the
# same (cpu_compile_error warm: the PCH read, no retry, plain torch's compiler lines; and with acceleration off), and
# test_compiler_lines_cpu the answer's line numbers.
@pytest.mark.slow
def test_a_compile_error_at_the_answer_s_lines_costs_one_compile_and_reads_as_without_acceleration(tmp_path):
    """With the PCH warm, a plain C++ error in the answer fails once (not again without the PCH: blame.py), with
    the answer's line given, for cpp_sources as a string and as a list; its compiler lines are those of the build
    without acceleration (torch's own load_inline)."""
    build_scaled_relu(tmp_path, "a", 2.0, ["-O2"])  # makes the PCH of these flags
    sandboxed = BuildOptions(timeout_s=600, confinement=Confinement(hidden=()))
    failed = {}
    for tag, sources in (("string", "CPP"), ("list", '["// the first source", CPP]')):
        source = BROKEN.format(tag=tag, sources=sources)
        [answer_line] = [i for i, line in enumerate(source.splitlines(), 1) if "undeclared_scale_xyz" in line]
        result = build(candidate_from_source(source), discover("cpu"), tmp_path, sandboxed)
        assert result.status == "compile_error", result.log[-3000:]
        assert "harness: using the precompiled torch/extension.h" in result.log, result.log[-3000:]
        assert PCH_RETRY not in result.log and result.log.count("FAILED: ") == 1, result.log[-3000:]
        [error] = [line for line in result.error.splitlines() if "undeclared_scale_xyz" in line]
        # torch's include before the string, and in the list form the first source's line too
        assert f"main.cpp:{5 + (tag == 'list')}:" in error and f"(answer line {answer_line}): error:" in error, error
        failed[tag] = result
    off = build(candidate_from_source(BROKEN.format(tag="string", sources="CPP")), discover("cpu"), tmp_path,
                BuildOptions(timeout_s=600, confinement=Confinement(hidden=()), accelerate=False))
    assert off.status == "compile_error" and "precompiled" not in off.log, off.log[-3000:]
    assert normalized_errors(failed["string"].log) == normalized_errors(off.log) != []
    assert off.error == failed["string"].error.replace(failed["string"].directory, off.directory)
