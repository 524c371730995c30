"""Standard 3-D convolution: 3x3x3 kernel, 64 -> 64 channels over (8, 64, 64, 64, 64) fp32.

out[n, o, z, y, x] = sum_{c, i, j, k} w[o, c, i, j, k] * in[n, c, z + i, y + j, x + k]
(no padding, stride 1, no bias).
"""
import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 64
DEPTH = 64
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3

TAGS = ["conv", "compute-bound"]


class Model(nn.Module):
    """nn.Conv3d(in_channels, out_channels, kernel_size, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
