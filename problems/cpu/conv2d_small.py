"""2-D convolution, 16 -> 32 channels, 3x3 kernel, padding 1, on a batch of 8 64x64 images (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 16
OUT_CHANNELS = 32
HEIGHT = 64
WIDTH = 64
KERNEL = 3

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 13, "OUT_CHANNELS": 24, "HEIGHT": 61, "WIDTH": 47},
     "about": "channel counts and an image size that are not multiples of 8"},
    {"name": "wide", "set": {"BATCH": 1, "HEIGHT": 7, "WIDTH": 300}, "about": "a single short, wide image"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "IN_CHANNELS": (2, 17), "OUT_CHANNELS": (3, 35), "HEIGHT": (5, 40),
                              "WIDTH": (5, 40)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(in, out, k, stride=1, padding=k // 2, bias=True): output keeps the spatial size."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
