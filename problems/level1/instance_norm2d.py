"""InstanceNorm2d (per-sample, per-channel statistics, affine) of a 32 x 128 x 448 x 448 fp32 tensor.

For each (n, c): out = (x[n, c] - mean) / sqrt(var + eps) * weight_c + bias_c, mean and biased variance over (H, W).
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 128
HEIGHT = 448
WIDTH = 448

TAGS = ["normalization", "memory-bound"]


class Model(nn.Module):
    """nn.InstanceNorm2d(num_features, affine=True) with random weight and bias."""

    def __init__(self, num_features: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(num_features, affine=True)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [CHANNELS]
