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
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 64, "WIDTH": 64}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 120, "OUT_CHANNELS": 60, "GROUPS": 6, "HEIGHT": 99,
                                  "WIDTH": 157},
     "about": "another group count, with channels per group and image sides that are not multiples of 32"},
    {"name": "many_groups", "set": {"BATCH": 2, "IN_CHANNELS": 256, "OUT_CHANNELS": 512, "GROUPS": 32, "HEIGHT": 45,
                                    "WIDTH": 45},
     "about": "many small groups, each with more output than input channels"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": 128, "OUT_CHANNELS": 128, "HEIGHT": (5, 70),
                              "WIDTH": (5, 70)},
     "about": "image sizes drawn at random, with fewer channels"},
]


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
