"""Depthwise 3-D convolution: 3x3x3 kernel, padding 1, one filter per channel over (16, 128, 64, 64, 64) fp32.

out[n, c, z, y, x] = sum_{i, j, k} w[c, 0, i, j, k] * in_padded[n, c, z + i, y + j, x + k]
(groups = channels, no bias). 27 multiply-adds per element: streaming 2.1 GB in and out is the cost.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 128
DEPTH = 64
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
PADDING = 1

TAGS = ["conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "CHANNELS": 16}, "public": True,
     "about": "a batch of one volume with fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 37, "DEPTH": 13, "HEIGHT": 29, "WIDTH": 45},
     "about": "a channel count and non-cubic volume sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (2, 48), "DEPTH": (3, 40), "HEIGHT": (3, 40),
                              "WIDTH": (3, 40)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv3d(channels, channels, kernel_size, padding=padding, groups=channels, bias=False)."""

    def __init__(self, channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, kernel_size, padding=padding, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE, PADDING]
