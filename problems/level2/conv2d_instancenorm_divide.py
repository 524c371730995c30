"""Conv2d 3x3 (64->128 channels, 256x256) + InstanceNorm2d (per sample and channel) + divide by 2, fp32.

y = instancenorm(conv2d(x, W, b)) / 2  with mean/var over (H, W) of each (sample, channel).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
DIVISOR = 2.0

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
    """Conv, non-affine instance normalization, then division by a constant."""

    def __init__(self, in_channels: int, out_channels: int, divisor: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)) / self.divisor


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, DIVISOR]
