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
