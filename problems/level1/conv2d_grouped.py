"""Grouped 2-D convolution: 8 groups, 3x3 kernel, padding 1, 512 -> 512 channels over (32, 512, 128, 128).

Each group of 64 output channels sees only its own 64 input channels:
out[n, o, y, x] = sum_{c in group(o), i, j} w[o, c, i, j] * in_padded[n, c, y + i, x + j] (no bias).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 512
OUT_CHANNELS = 512
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
PADDING = 1
GROUPS = 8

TAGS = ["conv", "compute-bound"]


class Model(nn.Module):
    """nn.Conv2d with groups, padding, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING, GROUPS]
