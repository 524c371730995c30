"""Strided Conv2d 3x3/s2 (128->256 channels, 256x256 -> 128x128, no bias) + BatchNorm2d (training) + SiLU, fp32.

The YOLOv5/EfficientNet downsampling block: y = silu(batchnorm(conv2d(x, W, stride=2, padding=1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 256
HEIGHT = 256
WIDTH = 256

TAGS = ["fusion", "conv", "compute-bound"]


class Model(nn.Module):
    """Conv (bias-free, as before a BatchNorm) with stride 2, batch-statistics BatchNorm, SiLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-3, momentum=0.03)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
