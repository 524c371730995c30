"""2-D max pooling, 3x3 window, stride 2, padding 1, over a (8, 32, 128, 128) fp32 tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL = 3
STRIDE = 2
PADDING = 1

TAGS = ["pooling", "memory-bound"]
# eager's CPU max_pool2d visits each window with scalar code: 13.2 ms on the 2-core CI machine, where the
# 21 MB moved take 0.74 ms at the measured 28 GB/s, so a vectorized kernel is up to ~18x faster for real
MAX_SPEEDUP = 25


class Model(nn.Module):
    """out[n, c, i, j] = max of x[n, c, i*s - p + di, j*s - p + dj] over the k x k window (padding ignored)."""

    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
