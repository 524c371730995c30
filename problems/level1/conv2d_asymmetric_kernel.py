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
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 99, "WIDTH": 157},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "kernel_high", "set": {"BATCH": 4, "IN_CHANNELS": 16, "OUT_CHANNELS": 32, "HEIGHT": 3, "WIDTH": 1000},
     "about": "wide images only as tall as the kernel (one output row)"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 80), "OUT_CHANNELS": (8, 140),
                              "HEIGHT": (8, 80), "WIDTH": (12, 80)},
     "about": "sizes drawn at random"},
]


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
