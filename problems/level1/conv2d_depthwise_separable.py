"""Depthwise-separable 2-D convolution: 3x3 depthwise (padding 1) then 1x1 pointwise 512 -> 512, over (48, 512, 128, 128).

mid[n, c] = depthwise 3x3 of x[n, c]; out[n, o, y, x] = sum_c p[o, c] * mid[n, c, y, x]
(no biases). The pointwise GEMM dominates the work; fusing avoids the intermediate round trip.
"""
import torch
import torch.nn as nn

BATCH = 48
IN_CHANNELS = 512
OUT_CHANNELS = 512
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
PADDING = 1

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 300, "OUT_CHANNELS": 200, "HEIGHT": 57, "WIDTH": 91},
     "about": "channel counts and non-square image sides that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "IN_CHANNELS": (4, 300), "OUT_CHANNELS": (4, 300),
                              "HEIGHT": (5, 80), "WIDTH": (5, 80)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Depthwise nn.Conv2d (groups = in_channels) followed by a 1x1 nn.Conv2d, both without bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding, groups=in_channels,
                                   bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING]
