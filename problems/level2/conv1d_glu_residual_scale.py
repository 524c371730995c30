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
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 555}, "public": True,
     "about": "a batch of one signal whose length is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 5, "CHANNELS": 97, "LENGTH": 999, "KERNEL": 5},
     "about": "a channel count that is not a multiple of 32, a wider kernel and an odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (16, 200), "LENGTH": (20, 800)},
     "about": "batch, channel count and length drawn at random"},
]


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
