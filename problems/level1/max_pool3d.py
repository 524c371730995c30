"""3-D max pooling (kernel 3, stride 2, padding 1) of a 16 x 32 x 128^3 fp32 volume.

out[n, c, d, h, w] = max over a, b, e < 3 of x[n, c, 2d - 1 + a, 2h - 1 + b, 2w - 1 + e]   (padding is -inf)
Output: 16 x 32 x 64^3.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
DEPTH = 128
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1

TAGS = ["pooling", "memory-bound"]


class Model(nn.Module):
    """nn.MaxPool3d(kernel_size, stride, padding) on NCDHW input."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
