"""Adaptive max pooling of a 128 x 512 x 128 x 128 fp32 tensor to a 7 x 7 grid (uneven, overlapping windows).

For output cell (i, j): rows floor(i * 128 / 7) .. ceil((i + 1) * 128 / 7) - 1, likewise columns;
out[n, c, i, j] is the max of x over that window. Only the values are returned (no indices).
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 512
HEIGHT = 128
WIDTH = 128
OUT_SIZE = 7

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 96, "HEIGHT": 100, "WIDTH": 150},
     "about": "a wide, non-square image whose sides are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "CHANNELS": (8, 200), "HEIGHT": (7, 160), "WIDTH": (7, 160)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.AdaptiveMaxPool2d(out_size) on NCHW input."""

    def __init__(self, out_size: int):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d(out_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUT_SIZE]
