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
