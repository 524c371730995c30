"""Depthwise Conv2d 7x7 (128 channels, 56x56) + channels-last LayerNorm over channels + GELU -> (256, 56, 56, 128), fp32.

The first half of a ConvNeXt block: y = gelu(layernorm_C(dwconv7x7(x).permute(0, 2, 3, 1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
CHANNELS = 128
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "memory-bound"]


class Model(nn.Module):
    """Depthwise 7x7 conv, permute to NHWC, LayerNorm over the channel dim (eps 1e-6), GELU."""

    def __init__(self, channels: int):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        return F.gelu(self.norm(y))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
