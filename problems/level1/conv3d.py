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
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "DEPTH": 32, "HEIGHT": 32, "WIDTH": 32}, "public": True,
     "about": "a batch of one smaller volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 19, "OUT_CHANNELS": 37, "DEPTH": 13, "HEIGHT": 29,
                                  "WIDTH": 45},
     "about": "channel counts and non-cubic volume sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "IN_CHANNELS": (3, 40), "OUT_CHANNELS": (4, 64), "DEPTH": (5, 24),
                              "HEIGHT": (5, 32), "WIDTH": (5, 40)},
     "about": "sizes drawn at random"},
]


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
