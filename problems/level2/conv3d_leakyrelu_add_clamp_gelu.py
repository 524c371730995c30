"""Conv3d 3x3x3 (24->48 channels, 32x112x112) + LeakyReLU(0.2) + per-channel add + clamp [-1, 1] + GELU, fp32.

y = gelu(clamp(leaky_relu(conv3d(x, W, b), 0.2) + t[c], -1, 1)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 24
OUT_CHANNELS = 48
DEPTH = 32
HEIGHT = 112
WIDTH = 112

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "DEPTH": 9, "HEIGHT": 57, "WIDTH": 43}, "public": True,
     "about": "a batch of one clip whose frame count, height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20, "DEPTH": 7, "HEIGHT": 30,
                                     "WIDTH": 45},
     "about": "channel counts that are not multiples of 32 and a small non-cubic volume"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "DEPTH": (2, 12), "HEIGHT": (3, 30), "WIDTH": (3, 30)},
     "about": "batch and volume sizes drawn at random"},
]


class Model(nn.Module):
    """3-D conv, leaky ReLU, add of a learned (C, 1, 1, 1) tensor, clamp, GELU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.shift = nn.Parameter(0.3 * torch.randn(out_channels, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.leaky_relu(self.conv(x), 0.2) + self.shift
        return F.gelu(torch.clamp(y, -1.0, 1.0))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
