"""Depthwise 2-D convolution: 3x3 kernel, padding 1, one filter per channel over (32, 384, 256, 256) fp32.

out[n, c, y, x] = sum_{i, j} w[c, 0, i, j] * in_padded[n, c, y + i, x + j] (groups = channels,
no bias). 9 multiply-adds per element: streaming 3.2 GB in and out is the cost.
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 384
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
PADDING = 1

TAGS = ["conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 96}, "public": True,
     "about": "a batch of one image with fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 99, "WIDTH": 257},
     "about": "a channel count and non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (4, 48), "HEIGHT": (5, 200), "WIDTH": (5, 200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(channels, channels, kernel_size, padding=padding, groups=channels, bias=False)."""

    def __init__(self, channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=padding, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE, PADDING]
