"""Conv3d 3x3x3 (64->128 channels, 16x56x56 clips) + BatchNorm3d (training) + ReLU + MaxPool3d 2 -> (32, 128, 8, 28, 28), fp32.

A C3D-style video block: y = maxpool3d_2(relu(batchnorm(conv3d(x, W, b)))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
FRAMES = 16
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "FRAMES": 7, "HEIGHT": 23, "WIDTH": 17}, "public": True,
     "about": "a batch of one clip whose frame count, height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 2, "IN_CHANNELS": 12, "OUT_CHANNELS": 40, "FRAMES": 5, "HEIGHT": 30,
                                     "WIDTH": 41},
     "about": "channel counts that are not multiples of 32 and a small non-cubic volume"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "FRAMES": (2, 8), "HEIGHT": (2, 14), "WIDTH": (2, 14)},
     "about": "batch and volume sizes drawn at random"},
]


class Model(nn.Module):
    """Spatio-temporal conv, batch-statistics BatchNorm, ReLU, 2x2x2 max pooling."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.bn = nn.BatchNorm3d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool3d(torch.relu(self.bn(self.conv(x))), 2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, FRAMES, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
