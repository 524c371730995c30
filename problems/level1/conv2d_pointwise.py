"""Pointwise (1x1) 2-D convolution: 512 -> 512 channels over (64, 512, 128, 128) fp32.

out[n, o, y, x] = sum_c w[o, c, 0, 0] * in[n, c, y, x] (no bias): a GEMM over the channel dim
in NCHW layout.
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 512
OUT_CHANNELS = 512
HEIGHT = 128
WIDTH = 128

TAGS = ["conv", "compute-bound"]


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, 1, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
