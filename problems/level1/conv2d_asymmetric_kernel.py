"""2-D convolution with an asymmetric 3x7 kernel: 64 -> 128 channels over (8, 64, 512, 512) fp32.

out[n, o, y, x] = sum_{c, i < 3, j < 7} w[o, c, i, j] * in[n, c, y + i, x + j] (no padding,
stride 1, no bias).
"""
import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 512
WIDTH = 512
KERNEL_H = 3
KERNEL_W = 7

TAGS = ["conv", "compute-bound"]


class Model(nn.Module):
    """nn.Conv2d with a (kernel_h, kernel_w) kernel, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_h: int, kernel_w: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (kernel_h, kernel_w), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_H, KERNEL_W]
