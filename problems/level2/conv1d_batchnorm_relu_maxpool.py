"""Conv1d k9 (64->128 channels, length 8192) + BatchNorm1d (training) + ReLU + MaxPool1d 2 -> (256, 128, 4096), fp32.

A 1-D CNN block for signals (ECG, sensor data): y = maxpool2(relu(batchnorm(conv1d(x, W, b)))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
IN_CHANNELS = 64
OUT_CHANNELS = 128
LENGTH = 8192
KERNEL = 9

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 9999}, "public": True,
     "about": "a batch of one long signal of odd length"},
    {"name": "odd_channels", "set": {"BATCH": 4, "IN_CHANNELS": 13, "OUT_CHANNELS": 50, "LENGTH": 1001, "KERNEL": 5},
     "about": "channel counts that are not multiples of 32, a smaller kernel and an odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "LENGTH": (50, 2000)},
     "about": "batch size and signal length drawn at random"},
]


class Model(nn.Module):
    """Same-length conv, batch-statistics BatchNorm, ReLU, pooling by 2 along time."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel, padding=kernel // 2)
        self.bn = nn.BatchNorm1d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool1d(torch.relu(self.bn(self.conv(x))), 2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
