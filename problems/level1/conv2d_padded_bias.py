"""2-D convolution with zero padding and bias: 5x5 kernel, padding 2, 64 -> 128 channels over (32, 64, 224, 224).

out[n, o, y, x] = b[o] + sum_{c, i, j} w[o, c, i, j] * in_padded[n, c, y + i, x + j]; the output
keeps the 224 x 224 size.
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 224
WIDTH = 224
KERNEL_SIZE = 5
PADDING = 2

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 112, "WIDTH": 112}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 57, "WIDTH": 91},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 80), "OUT_CHANNELS": (8, 140),
                              "HEIGHT": (3, 64), "WIDTH": (3, 64)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding) with bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING]
