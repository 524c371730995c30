"""Conv2d 3x3 (64->128 channels, 256x256) + learned per-channel multiplier + LeakyReLU(0.1) + GELU, fp32.

y = gelu(leaky_relu(conv2d(x, W, b) * m[c], 0.1)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
NEGATIVE_SLOPE = 0.1

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 97, "WIDTH": 131}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 19, "OUT_CHANNELS": 45, "HEIGHT": 41, "WIDTH": 70},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 5), "HEIGHT": (5, 60), "WIDTH": (5, 60)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, per-channel scaling by a (C, 1, 1) parameter, LeakyReLU, GELU."""

    def __init__(self, in_channels: int, out_channels: int, negative_slope: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.multiplier = nn.Parameter(1.0 + 0.5 * torch.randn(out_channels, 1, 1))
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.leaky_relu(self.conv(x) * self.multiplier, self.negative_slope)
        return F.gelu(y)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, NEGATIVE_SLOPE]
