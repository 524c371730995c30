"""3-D average pooling (kernel 2, stride 2) of a 16 x 32 x 128^3 fp32 volume.

out[n, c, d, h, w] = (1 / 8) * sum over a, b, e < 2 of x[n, c, 2d + a, 2h + b, 2w + e]; output 16 x 32 x 64^3.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
DEPTH = 128
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 2
STRIDE = 2

TAGS = ["pooling", "memory-bound"]


class Model(nn.Module):
    """nn.AvgPool3d(kernel_size, stride) on NCDHW input."""

    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH) + 0.5]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE]
