"""Conv1d k10/s5 on raw audio (1->512 channels, 160000 samples -> 31999 frames, no bias) + per-channel GroupNorm + GELU, fp32.

The first wav2vec 2.0 feature-extractor layer: y = gelu(groupnorm_{512 groups}(conv1d(waveform))), i.e. each
channel normalized over time per sample.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
SAMPLES = 160000
CHANNELS = 512
KERNEL = 10
STRIDE = 5

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "SAMPLES": 24001}, "public": True,
     "about": "a batch of one shorter clip whose frame count is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "SAMPLES": 9999, "CHANNELS": 100},
     "about": "a channel count and a frame count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "SAMPLES": (500, 20000), "CHANNELS": (16, 512)},
     "about": "batch, clip length and channel count drawn at random"},
]


class Model(nn.Module):
    """Single-input-channel strided conv (a learned filterbank), GroupNorm with one group per channel, GELU."""

    def __init__(self, channels: int, kernel: int, stride: int):
        super().__init__()
        self.conv = nn.Conv1d(1, channels, kernel, stride=stride, bias=False)
        self.norm = nn.GroupNorm(channels, channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, 1, SAMPLES)]


def get_init_inputs():
    return [CHANNELS, KERNEL, STRIDE]
