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
