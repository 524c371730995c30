"""Pointwise (1x1) 2-D convolution: 512 -> 512 channels over (64, 512, 128, 128) fp32.

out[n, o, y, x] = sum_c w[o, c, 0, 0] * in[n, c, y, x] (no bias): a GEMM over the channel dim
in NCHW layout.
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 512
OUT_CHANNELS = 512
HEIGHT = 128
WIDTH = 128

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 3, "IN_CHANNELS": 100, "OUT_CHANNELS": 300, "HEIGHT": 57, "WIDTH": 91},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "few_channels", "set": {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 64, "HEIGHT": 300, "WIDTH": 300},
     "about": "few input channels (a short reduction) over large images"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "IN_CHANNELS": (8, 300), "OUT_CHANNELS": (16, 300),
                              "HEIGHT": (5, 100), "WIDTH": (5, 100)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, 1, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
