"""2-D convolution on a wide 256 x 1024 input, 3x3 kernel: 128 -> 128 channels, batch 8, fp32.

out[n, o, y, x] = sum_{c, i, j} w[o, c, i, j] * in[n, c, y + i, x + j] (no padding, stride 1,
no bias).
"""
import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 1024
KERNEL_SIZE = 3

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 32}, "public": True,
     "about": "a batch of one shorter image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 67, "OUT_CHANNELS": 100, "HEIGHT": 45, "WIDTH": 301},
     "about": "channel counts and image sides that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 1, "IN_CHANNELS": 64, "OUT_CHANNELS": 96, "HEIGHT": 700, "WIDTH": 40},
     "about": "a tall, narrow image instead of a wide one"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "IN_CHANNELS": (8, 130), "OUT_CHANNELS": (8, 130),
                              "HEIGHT": (8, 64), "WIDTH": (8, 200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, kernel_size, bias=False) on a non-square input."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
