"""2-D transposed convolution with stride 2, padding 1, dilation 2: 3x3 kernel, 128 -> 128 channels over (16, 128, 256, 256).

out[n, o, y, x] = sum_{c, i, j : 2 h - 1 + 2 i = y, 2 w - 1 + 2 j = x} w[c, o, i, j] * in[n, c, h, w];
the output is 513 x 513 (no bias).
"""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 2

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
    """nn.ConvTranspose2d with stride, padding and dilation, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 dilation: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, DILATION]
