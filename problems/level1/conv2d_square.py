"""2-D convolution, square input and 3x3 kernel: 128 -> 128 channels over (16, 128, 384, 384) fp32.

out[n, o, y, x] = sum_{c, i, j} w[o, c, i, j] * in[n, c, y + i, x + j] (no padding, stride 1,
no bias).
"""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 384
WIDTH = 384
KERNEL_SIZE = 3

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 99, "WIDTH": 99},
     "about": "channel counts and an image side that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 1, "IN_CHANNELS": 64, "OUT_CHANNELS": 64, "HEIGHT": 50, "WIDTH": 400},
     "about": "a wide, non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 130), "OUT_CHANNELS": (8, 130),
                              "HEIGHT": (5, 64), "WIDTH": (5, 64)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
