"""2-D convolution with stride 2: 3x3 kernel, padding 1, 256 -> 256 channels over (32, 256, 256, 256) fp32.

out[n, o, y, x] = sum_{c, i, j} w[o, c, i, j] * in_padded[n, c, 2 y + i, 2 x + j]; the output is
128 x 128 (no bias).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 256
OUT_CHANNELS = 256
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 99, "WIDTH": 157},
     "about": "channel counts and odd, non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 130), "OUT_CHANNELS": (8, 130),
                              "HEIGHT": (4, 100), "WIDTH": (4, 100)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d with stride and padding, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
