"""Sum reduction over the leading dimension of a (1024, 4096) tensor (CPU-sized)."""
import torch
import torch.nn as nn

ROWS = 1024
COLS = 4096
REDUCE_DIM = 0

TAGS = ["reduction", "memory-bound"]


class Model(nn.Module):
    """Sum over dim 0: out[j] = sum_i x[i, j] (a strided, column-wise reduction)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return [REDUCE_DIM]
