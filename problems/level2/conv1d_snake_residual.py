"""Dilated Conv1d k7 (384 channels, dilation 3, length 16384) + Snake activation (per-channel alpha) + residual add, fp32.

From BigVGAN/DAC audio decoders: h = conv1d(x, W, b, dilation=3, same padding);
y = h + sin(alpha[c] * h)^2 / (alpha[c] + 1e-9) + x.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 384
LENGTH = 16384
KERNEL = 7
DILATION = 3

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 777}, "public": True,
     "about": "a batch of one signal whose length is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "CHANNELS": 99, "LENGTH": 1001, "DILATION": 5},
     "about": "a channel count that is not a multiple of 32, another dilation and an odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (16, 200), "LENGTH": (50, 700), "DILATION": (1, 9)},
     "about": "batch, channel count, length and dilation drawn at random"},
]


class Model(nn.Module):
    """Same-length dilated conv, periodic Snake activation with a learned frequency per channel, identity shortcut."""

    def __init__(self, channels: int, kernel: int, dilation: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2)
        self.alpha = nn.Parameter(0.5 + torch.rand(1, channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x)
        h = h + torch.sin(self.alpha * h).pow(2) / (self.alpha + 1e-9)
        return h + x


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL, DILATION]
