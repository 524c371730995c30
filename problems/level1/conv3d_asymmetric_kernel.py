"""3-D convolution with an asymmetric 3x5x7 kernel: 32 -> 64 channels over (4, 32, 32, 64, 96) fp32.

out[n, o, z, y, x] = sum_{c, i < 3, j < 5, k < 7} w[o, c, i, j, k] * in[n, c, z + i, y + j, x + k]
(no padding, stride 1, no bias).
"""
import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 32
HEIGHT = 64
WIDTH = 96
KERNEL_D = 3
KERNEL_H = 5
KERNEL_W = 7

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "DEPTH": 8, "HEIGHT": 32, "WIDTH": 48}, "public": True,
     "about": "a batch of one smaller volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 19, "OUT_CHANNELS": 37, "DEPTH": 13, "HEIGHT": 29,
                                  "WIDTH": 45},
     "about": "channel counts and volume sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "IN_CHANNELS": (3, 32), "OUT_CHANNELS": (4, 48), "DEPTH": (5, 16),
                              "HEIGHT": (7, 24), "WIDTH": (9, 40)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv3d with a (kernel_d, kernel_h, kernel_w) kernel, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_d: int, kernel_h: int, kernel_w: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, (kernel_d, kernel_h, kernel_w), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_D, KERNEL_H, KERNEL_W]
