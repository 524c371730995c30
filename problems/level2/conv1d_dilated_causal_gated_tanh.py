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
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 1499}, "public": True,
     "about": "a batch of one signal whose length is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "CHANNELS": 100, "LENGTH": 1001, "DILATION": 5},
     "about": "a channel count that is not a multiple of 32, another dilation and an odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (16, 200), "LENGTH": (50, 1500), "DILATION": (1, 16)},
     "about": "batch, channel count, length and dilation drawn at random"},
]


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
