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
