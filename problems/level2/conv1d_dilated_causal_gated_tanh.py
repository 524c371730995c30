"""Dilated causal Conv1d k2 (384->768 channels, dilation 8, length 16384) + WaveNet gate tanh(a) * sigmoid(b) + residual, fp32.

y = tanh(f) * sigmoid(g) + x  where f, g = split(conv1d(pad_left(x, 8), W, b, dilation=8), 2, dim=1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 384
LENGTH = 16384
KERNEL = 2
DILATION = 8

TAGS = ["fusion", "conv", "compute-bound"]


class Model(nn.Module):
    """Left-padded (causal) dilated conv producing filter and gate halves, gated activation, residual add."""

    def __init__(self, channels: int, kernel: int, dilation: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel, dilation=dilation)
        self.pad = (kernel - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f, g = self.conv(F.pad(x, (self.pad, 0))).chunk(2, dim=1)
        return torch.tanh(f) * torch.sigmoid(g) + x


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL, DILATION]
