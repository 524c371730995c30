"""Adaptive average pooling of a 128 x 1024 x 96 x 96 fp32 tensor to a 5 x 7 grid (uneven, overlapping windows).

For output cell (i, j): rows floor(i * H / 5) .. ceil((i + 1) * H / 5) - 1, columns floor(j * W / 7) ..
ceil((j + 1) * W / 7) - 1; out[n, c, i, j] is the mean of x over that window.
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 1024
HEIGHT = 96
WIDTH = 96
OUT_H = 5
OUT_W = 7

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 100, "HEIGHT": 67, "WIDTH": 45},
     "about": "a channel count and a non-square image whose sides are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "CHANNELS": (16, 300), "HEIGHT": (7, 130), "WIDTH": (7, 130)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.AdaptiveAvgPool2d((out_h, out_w)) on NCHW input."""

    def __init__(self, out_h: int, out_w: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((out_h, out_w))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 0.5]


def get_init_inputs():
    return [OUT_H, OUT_W]
