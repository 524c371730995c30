"""Conv2d 3x3 (128->128 channels, 256x256) + Mish + residual add of the input, fp32.

y = mish(conv2d(x, W, b)) + x,  mish(v) = v * tanh(softplus(v)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 128
HEIGHT = 256
WIDTH = 256

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 61, "WIDTH": 77}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "CHANNELS": 45, "HEIGHT": 41, "WIDTH": 70},
     "about": "a channel count that is not a multiple of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 45), "WIDTH": (5, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """A residual unit: same-shape conv, Mish activation, identity shortcut."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(self.conv(x)) + x


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
