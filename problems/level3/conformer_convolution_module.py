"""Conformer convolution module: LN, pointwise conv to 2C, GLU, depthwise conv (k=31), BatchNorm, Swish, pointwise conv, residual (B=32, T=2048, C=512).

y = W_2 swish(BN(DWConv_31(GLU(W_1 LN(x))))) + x over time; BatchNorm uses batch statistics (training mode).
The pointwise (kernel-1) convolutions are written as Linear layers on the (B, T, C) layout (identical math).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
TIME = 2048
CHANNELS = 512
KERNEL = 31

TAGS = ["architecture", "conformer", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 2, "TIME": 1000},
     "about": "a small batch of sequences whose length is not a multiple of 128"},
    {"name": "narrow", "set": {"BATCH": 3, "TIME": 333, "CHANNELS": 144, "KERNEL": 15},
     "about": "fewer channels and a shorter depthwise kernel"},
    {"name": "drawn", "set": {"BATCH": 1, "TIME": (100, 1500)},
     "about": "one sequence whose length is drawn at random"},
]


class Model(nn.Module):
    """The convolution block of a Conformer layer (Gulati et al. 2020), no dropout."""

    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.pointwise1 = nn.Linear(channels, 2 * channels)
        self.depthwise = nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=channels)
        self.bn = nn.BatchNorm1d(channels)
        self.pointwise2 = nn.Linear(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.glu(self.pointwise1(self.norm(x)), dim=-1)                   # (B, T, C)
        h = self.depthwise(h.transpose(1, 2))                              # (B, C, T)
        h = F.silu(self.bn(h)).transpose(1, 2)
        return x + self.pointwise2(h)


def get_inputs():
    return [torch.randn(BATCH, TIME, CHANNELS)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
