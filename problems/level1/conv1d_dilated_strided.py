"""1-D convolution with stride 2 and dilation 3: 128 -> 256 channels, kernel 5, over (16, 128, 131072).

out[n, o, t] = sum_{c, k} w[o, c, k] * x[n, c, 2 t + 3 k] (no padding, no bias).
"""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 128
OUT_CHANNELS = 256
LENGTH = 131072
KERNEL_SIZE = 5
STRIDE = 2
DILATION = 3

TAGS = ["conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "LENGTH": 16384}, "public": True,
     "about": "a batch of one shorter signal"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 37, "OUT_CHANNELS": 100, "LENGTH": 10001},
     "about": "channel counts and an odd signal length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "IN_CHANNELS": (4, 200), "OUT_CHANNELS": (4, 300),
                              "LENGTH": (60, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv1d with stride and dilation, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, dilation: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, DILATION]
