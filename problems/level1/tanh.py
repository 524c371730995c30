"""Tanh of a 49152 x 16384 fp32 matrix.

out = tanh(x)
"""
import torch
import torch.nn as nn

ROWS = 49152
COLS = 16384

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise tanh: out = tanh(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
