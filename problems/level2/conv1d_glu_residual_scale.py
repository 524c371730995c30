"""Conv1d k3 (512->1024 channels, length 4096) + GLU over channels + residual add + scale by sqrt(0.5), fp32.

A ConvS2S encoder layer: y = (glu(conv1d(x, W, b), dim=1) + x) * sqrt(0.5).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 512
LENGTH = 4096
KERNEL = 3

TAGS = ["fusion", "conv", "compute-bound"]


class Model(nn.Module):
    """Same-length conv to 2C channels, gated linear unit back to C, residual, variance-preserving scale."""

    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel, padding=kernel // 2)
        self.scale = math.sqrt(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (F.glu(self.conv(x), dim=1) + x) * self.scale


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
