import os

import pytest

from harness.device import DeviceError, discover, visible_gpus

FAKE_SMI = """#!/bin/sh
echo "0, GPU-aaaa1111, NVIDIA H100 80GB HBM3, 9.0"
echo "1, GPU-bbbb2222, NVIDIA A100-SXM4-80GB, 8.0"
"""


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """nvidia-smi is the boundary to the driver: a two-GPU stand-in on PATH."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_gpus_and_pinned_arch(fake_smi):
    gpus = visible_gpus()
    assert [(g.index, g.name, g.arch) for g in gpus] == [(0, "NVIDIA H100 80GB HBM3", "9.0a"),
                                                         (1, "NVIDIA A100-SXM4-80GB", "8.0")]
    assert discover(None).target == "cuda"


def test_cuda_visible_devices_filters_like_cuda(fake_smi, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert [g.index for g in visible_gpus()] == [1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa")
    assert [g.index for g in visible_gpus()] == [0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpus() == []


def test_cpu_target_and_missing_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    assert discover(None).target == "cpu"
    assert discover("cpu").name
    with pytest.raises(DeviceError, match="--target cpu"):
        discover("cuda")
