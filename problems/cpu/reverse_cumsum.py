"""Reverse cumulative sum along a dimension (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 256
N = 4096
DIM = 1

TAGS = ["scan", "memory-bound"]


class Model(nn.Module):
    """Reverse cumulative sum: out[i, j] = sum_{k >= j} x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)


def get_inputs():
    return [torch.rand(BATCH, N)]


def get_init_inputs():
    return [DIM]
