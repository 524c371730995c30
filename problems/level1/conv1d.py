"""Standard 1-D convolution: 256 -> 256 channels, kernel 3, over (64, 256, 16384) fp32.

out[n, o, t] = sum_{c, k} w[o, c, k] * x[n, c, t + k] (no padding, stride 1, no bias).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 256
OUT_CHANNELS = 256
LENGTH = 16384
KERNEL_SIZE = 3

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "LENGTH": 8192}, "public": True,
     "about": "a batch of one shorter signal"},
    {"name": "unaligned", "set": {"BATCH": 3, "IN_CHANNELS": 200, "OUT_CHANNELS": 100, "LENGTH": 3001},
     "about": "channel counts and a signal length that are not multiples of 32"},
    {"name": "few_channels", "set": {"BATCH": 1, "IN_CHANNELS": 3, "OUT_CHANNELS": 16, "LENGTH": 100003},
     "about": "few channels over a long signal"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "IN_CHANNELS": (8, 300), "OUT_CHANNELS": (8, 300),
                              "LENGTH": (50, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv1d(in_channels, out_channels, kernel_size, bias=False)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
