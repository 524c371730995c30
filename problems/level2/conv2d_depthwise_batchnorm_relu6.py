"""Depthwise Conv2d 3x3 (256 channels, 112x112, groups=256, no bias) + BatchNorm2d (training) + ReLU6, fp32.

The MobileNetV2 depthwise stage: y = clamp(batchnorm(depthwise_conv3x3(x)), 0, 6).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
CHANNELS = 256
HEIGHT = 112
WIDTH = 112

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 111, "WIDTH": 97}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 7, "CHANNELS": 100, "HEIGHT": 30, "WIDTH": 57},
     "about": "a channel count that is not a multiple of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (8, 300), "HEIGHT": (5, 50), "WIDTH": (5, 50)},
     "about": "batch, channel and image sizes drawn at random"},
]


class Model(nn.Module):
    """Depthwise conv (one 3x3 filter per channel), batch-statistics BatchNorm, ReLU6."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.5 * torch.rand(channels))
            self.bn.bias.copy_(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
