"""GroupNorm (32 groups of 8 channels, affine) of a 64 x 256 x 224 x 224 fp32 tensor.

For each (n, group g): mean and biased variance over the group's 8 channels and all H x W positions;
out[n, c] = (x[n, c] - mean) / sqrt(var + eps) * weight_c + bias_c.
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 256
GROUPS = 32
HEIGHT = 224
WIDTH = 224

TAGS = ["normalization", "memory-bound"]


class Model(nn.Module):
    """nn.GroupNorm(num_groups, num_channels) with random affine weight and bias."""

    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)
        nn.init.uniform_(self.gn.weight, 0.5, 1.5)
        nn.init.uniform_(self.gn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [GROUPS, CHANNELS]
