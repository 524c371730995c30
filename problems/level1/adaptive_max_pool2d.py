"""Adaptive max pooling of a 128 x 512 x 128 x 128 fp32 tensor to a 7 x 7 grid (uneven, overlapping windows).

For output cell (i, j): rows floor(i * 128 / 7) .. ceil((i + 1) * 128 / 7) - 1, likewise columns;
out[n, c, i, j] is the max of x over that window. Only the values are returned (no indices).
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 512
HEIGHT = 128
WIDTH = 128
OUT_SIZE = 7

TAGS = ["pooling", "memory-bound"]


class Model(nn.Module):
    """nn.AdaptiveMaxPool2d(out_size) on NCHW input."""

    def __init__(self, out_size: int):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d(out_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [OUT_SIZE]
