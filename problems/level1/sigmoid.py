"""Sigmoid of a 16384 x 49152 fp32 matrix.

out = 1 / (1 + exp(-x))
"""
import torch
import torch.nn as nn

ROWS = 16384
COLS = 49152

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise sigmoid: out = 1 / (1 + exp(-x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
