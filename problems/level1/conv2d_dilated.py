"""Dilated 2-D convolution: 3x3 kernel, dilation 2, padding 2, 128 -> 128 channels over (32, 128, 256, 256).

out[n, o, y, x] = sum_{c, i, j} w[o, c, i, j] * in_padded[n, c, y + 2 i, x + 2 j]; the output
keeps the 256 x 256 size (no bias).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
DILATION = 2
PADDING = 2

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 99, "WIDTH": 157},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 100), "OUT_CHANNELS": (8, 130),
                              "HEIGHT": (5, 80), "WIDTH": (5, 80)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d with dilation and padding, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, dilation=dilation, padding=padding,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, DILATION, PADDING]
