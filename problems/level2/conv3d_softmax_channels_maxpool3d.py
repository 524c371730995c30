"""Conv3d 3x3x3 (32->64 channels, 32x128x128 volumes) + softmax over channels + MaxPool3d 2 -> (8, 64, 16, 64, 64), fp32.

y = maxpool3d_2(softmax_c(conv3d(x, W, b))): per-voxel class probabilities, then pooled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 32
HEIGHT = 128
WIDTH = 128

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
    """Same-size 3-D conv, channel softmax, 2x2x2 max pooling."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool3d(torch.softmax(self.conv(x), dim=1), 2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
