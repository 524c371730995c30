"""Conv1d k3/s2 (512->512 channels, length 16384 -> 8191, no bias) + LayerNorm over channels + GELU, fp32.

A wav2vec 2.0 feature-extractor layer (layer-norm variant): y = gelu(layernorm_C(conv1d(x).transpose(1, 2))).transpose(1, 2).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 512
LENGTH = 16384
KERNEL = 3
STRIDE = 2

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 2001}, "public": True,
     "about": "a batch of one signal whose length is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 4, "CHANNELS": 257, "LENGTH": 999},
     "about": "a normalized channel count and a length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (64, 300), "LENGTH": (20, 1000)},
     "about": "batch, channel count and length drawn at random"},
]


class Model(nn.Module):
    """Strided conv over time, LayerNorm across the channel dim of every frame, GELU; output stays (N, C, L)."""

    def __init__(self, channels: int, kernel: int, stride: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, stride=stride, bias=False)
        self.norm = nn.LayerNorm(channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.conv(x).transpose(1, 2)).transpose(1, 2)
        return F.gelu(y)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL, STRIDE]
