"""The off switch of build acceleration (harness/fastbuild): off, the build child calls torch's own load_inline with
the candidate's arguments (the build directory and verbosity alone ours, as always), starts no nvcc driver and asks
for no precompiled header; the setting reaches the child through its environment and keys its builds apart."""

import functools
import os
import types
from pathlib import Path

import pytest

from harness.child import loader
from harness.config import ENV, load_settings
from harness.eval.build import build_env, build_sha256
from harness.eval.candidate import candidate_from_source
from harness.fastbuild import hooks, names
from harness.process import ChildOutcome
from harness.types import DeviceInfo

CPU = DeviceInfo(target="cpu", name="cpu")


@pytest.fixture
def torch_calls(tmp_path, monkeypatch):
    """torch's load_inline replaced by a recorder of what it is given (with torch's signature), the loader
    installed in build mode over it, and the hooks' entries watched."""
    import torch.utils.cpp_extension as cpp_ext

    calls, hooked = [], []

    @functools.wraps(cpp_ext.load_inline)
    def load_inline(*args, **kwargs):
        calls.append((args, kwargs, os.environ.get("PYTORCH_NVCC")))
        module = types.ModuleType(kwargs.get("name", args[0]))
        module.__file__ = str(tmp_path / "ext.so")
        return module

    real_driver = hooks.nvcc_driver
    monkeypatch.setattr(cpp_ext, "load_inline", load_inline)
    monkeypatch.setattr(hooks, "precompiled_header_dir", lambda *a: hooked.append("pch"))
    monkeypatch.setattr(hooks, "nvcc_driver", lambda *a, **k: hooked.append("nvcc") or real_driver(*a, **k))
    monkeypatch.setenv(names.PCH_REQUESTS_ENV, str(tmp_path / names.PCH_REQUESTS))
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)

    def build(acceleration: str):
        monkeypatch.setenv(names.ENV, acceleration)
        loader.install_extension_loader(tmp_path, "build")
        cpp_ext.load_inline("relu", "torch::Tensor relu(torch::Tensor x);", functions=["relu"],
                            extra_cflags=["-O1"])
        return calls.pop(), hooked

    return build


def test_off_is_torchs_own_call_with_the_candidates_arguments(torch_calls, tmp_path):
    (args, kwargs, nvcc), hooked = torch_calls("0")
    assert args == ("relu", "torch::Tensor relu(torch::Tensor x);")
    assert kwargs == {"functions": ["relu"], "extra_cflags": ["-O1"], "verbose": True,
                      "build_directory": str(tmp_path / "ext0_relu")}
    assert nvcc is None and hooked == [] and not (tmp_path / names.PCH_REQUESTS).exists()


def test_on_goes_through_the_hooks(torch_calls):
    """The control: the same call, acceleration on, asks for a PCH and puts nvcc behind the driver's switch."""
    (_, kwargs, _), hooked = torch_calls("1")
    assert hooked == ["nvcc", "pch"] and kwargs["extra_cflags"] == ["-O1"]  # no PCH made: torch's flags


def test_the_setting_reaches_the_build_child_whatever_the_parents_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(names.ENV, "0")  # the parent's own: the setting already read it
    on = build_env(CPU, tmp_path, max_jobs=1, accelerate=True)
    off = build_env(CPU, tmp_path, max_jobs=1, accelerate=False)
    assert names.enabled(on) and not names.enabled(off)
    assert {names.PCH_REQUESTS_ENV, names.PCH_TRUSTED_ENV} <= set(on)
    assert not {names.PCH_REQUESTS_ENV, names.PCH_TRUSTED_ENV, names.SPLIT_NVCC_ENV} & set(off)


def test_builds_without_acceleration_are_keyed_apart():
    candidate = candidate_from_source("x = 1\n")
    assert build_sha256(candidate, CPU) == build_sha256(candidate, CPU, accelerated=True)  # keys made before stand
    assert build_sha256(candidate, CPU, accelerated=False) != build_sha256(candidate, CPU)


@pytest.mark.parametrize("value, enabled", [("0", False), ("false", False), ("off", False), ("1", True),
                                            ("true", True), ("on", True)])
def test_the_setting_and_the_child_read_the_variable_alike(monkeypatch, value, enabled):
    assert {var for var, setting in ENV.items() if setting == "build_acceleration"} == {names.ENV}
    monkeypatch.setenv(names.ENV, value)
    assert load_settings().build_acceleration is enabled is names.enabled()


def test_the_flag_turns_it_off(monkeypatch):
    from harness.cli.main import build_parser
    from harness.cli.options import settings_from

    monkeypatch.delenv(names.ENV, raising=False)
    parse = build_parser().parse_args
    assert settings_from(parse(["eval", "--problem", "p", "x.py", "--build-acceleration", "off"])).build_acceleration \
        is False
    assert settings_from(parse(["eval", "--problem", "p", "x.py"])).build_acceleration is True


def test_off_makes_nothing_after_the_build(tmp_path, monkeypatch):
    """The parent's side: no precompiled header made, none asked for, for a build made without acceleration."""
    from harness.eval import build as build_module
    from harness.eval.build import BuildOptions

    made = []
    monkeypatch.setattr(build_module, "make_requested_pchs", lambda *a, **k: made.append(a))
    monkeypatch.setattr(build_module, "trusted_keys", lambda: made.append("trusted") or [])
    monkeypatch.setattr(build_module, "run_child", lambda *a, **k: (Path(k["log_path"]).write_text(""),
                                                                    ChildOutcome(1, False, 0.0))[1])
    named = "from torch.utils.cpp_extension import load_inline\n"  # a source naming none has no build child
    build_module.build(candidate_from_source(named + "x = 1\n"), CPU, tmp_path, BuildOptions(accelerate=False))
    assert made == []
    build_module.build(candidate_from_source(named + "x = 2\n"), CPU, tmp_path, BuildOptions(accelerate=True))
    assert made[0] == "trusted" and len(made) == 2  # the control
