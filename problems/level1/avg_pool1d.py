"""1-D average pooling (kernel 8, stride 4, padding 2) over a 64 x 128 x 131072 fp32 signal.

out[n, c, i] = (1 / 8) * sum over k < 8 of x[n, c, 4i - 2 + k]   (zero padding, counted in the divisor)
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 128
LENGTH = 131072
KERNEL_SIZE = 8
STRIDE = 4
PADDING = 2

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "CHANNELS": 16}, "public": True,
     "about": "a batch of one signal with fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 50, "LENGTH": 10001},
     "about": "a channel count and a signal length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "CHANNELS": (3, 32), "LENGTH": (200, 30000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.AvgPool1d(kernel_size, stride, padding) on (N, C, L); count_include_pad=True (the default)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH) + 0.5]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
