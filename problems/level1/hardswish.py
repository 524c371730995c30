"""Hardswish of a 64 x 192 x 256 x 256 fp32 tensor (MobileNetV3-style feature map).

out = x * relu6(x + 3) / 6
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 192
HEIGHT = 256
WIDTH = 256

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise hardswish: out = x * relu6(x + 3) / 6."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return []
