"""Add a (4096,) fp32 row vector to every row of a (196608, 4096) fp32 matrix (broadcast add)."""
import torch
import torch.nn as nn

ROWS = 196608
COLS = 4096

TAGS = ["broadcast", "memory-bound"]


class Model(nn.Module):
    """out[i, j] = a[i, j] + b[j]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(COLS)]


def get_init_inputs():
    return []
