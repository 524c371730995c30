"""Reverse cumulative sum along dim 1 of a 32768 x 32768 fp32 matrix."""
import torch
import torch.nn as nn

ROWS = 32768
COLS = 32768
DIM = 1

TAGS = ["scan", "memory-bound"]


class Model(nn.Module):
    """out[i, j] = sum over k >= j of x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
