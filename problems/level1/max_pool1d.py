"""1-D max pooling (kernel 4, stride 2, padding 1) over a 16 x 256 x 131072 fp32 signal.

out[n, c, i] = max over k < 4 of x[n, c, 2 * i - 1 + k]   (out-of-range positions are -inf)
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 256
LENGTH = 131072
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "CHANNELS": 1, "LENGTH": 100003}, "public": True,
     "about": "a single long signal whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "LENGTH": 4099},
     "about": "a channel count and a length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (1, 64), "LENGTH": (100, 10000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.MaxPool1d(kernel_size, stride, padding) on (N, C, L)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
