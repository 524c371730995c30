"""Mish of a 128 x 96 x 256 x 256 fp32 tensor.

out = x * tanh(softplus(x))
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
CHANNELS = 96
HEIGHT = 256
WIDTH = 256

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise mish: out = x * tanh(softplus(x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
