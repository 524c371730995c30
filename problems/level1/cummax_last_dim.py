"""Cumulative max along the last dim of a (49152, 8192) fp32 tensor, returning (values, int64 indices)."""
import torch
import torch.nn as nn

ROWS = 49152
COLS = 8192
DIM = 1

TAGS = ["scan", "memory-bound"]


class Model(nn.Module):
    """values[i, j] = max over k <= j of x[i, k]; indices[i, j] = where it is attained (on ties, the later k)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.cummax(x, dim=self.dim)
        return values, indices


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
