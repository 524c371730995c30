"""Argmax over the last dim of a (196608, 8192) fp32 tensor (int64 indices)."""
import torch
import torch.nn as nn

ROWS = 196608
COLS = 8192
DIM = -1

TAGS = ["reduction", "memory-bound"]


class Model(nn.Module):
    """out[i] = the j maximising x[i, j] (int64)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
