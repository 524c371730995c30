"""Conv3d 3x3x3 (32->64 channels, 32x96x96) + per-channel scale + MaxPool3d 2 + global average pool -> (16, 64), fp32.

y[n, c] = mean over (d, h, w) of maxpool3d_2(conv3d(x, W, b) * s[c]).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 32
HEIGHT = 96
WIDTH = 96

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "DEPTH": 9, "HEIGHT": 45, "WIDTH": 33}, "public": True,
     "about": "a batch of one clip whose frame count, height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 10, "OUT_CHANNELS": 36, "DEPTH": 5, "HEIGHT": 27,
                                     "WIDTH": 30},
     "about": "channel counts that are not multiples of 32 and a small non-cubic volume"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "DEPTH": (2, 10), "HEIGHT": (2, 20), "WIDTH": (2, 20)},
     "about": "batch and volume sizes drawn at random"},
]


class Model(nn.Module):
    """3-D conv, learned per-channel scaling (signs vary, so the max pool matters), max pooling, spatial mean."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.scale = nn.Parameter(torch.randn(1, out_channels, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.max_pool3d(self.conv(x) * self.scale, 2)
        return y.mean(dim=(2, 3, 4))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
