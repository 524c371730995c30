"""2-D transposed convolution: 3x3 kernel, stride 1, 128 -> 128 channels over (32, 128, 256, 256) fp32.

out[n, o, y, x] = sum_{c, i, j} w[c, o, i, j] * in[n, c, y - i, x - j] (out-of-range terms are 0);
the output is 258 x 258 (no bias).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3

TAGS = ["conv-transpose", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "HEIGHT": 99, "WIDTH": 157},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (3, 130), "OUT_CHANNELS": (8, 130),
                              "HEIGHT": (2, 64), "WIDTH": (2, 64)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.ConvTranspose2d(in_channels, out_channels, kernel_size, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
