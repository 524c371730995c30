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
