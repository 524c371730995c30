"""Softmax over the last dim of a 98304 x 8192 fp32 matrix.

out[i, j] = exp(x[i, j] - max_k x[i, k]) / sum over k of exp(x[i, k] - max_k x[i, k]).
"""
import torch
import torch.nn as nn

ROWS = 98304
COLS = 8192
DIM = -1

TAGS = ["softmax", "memory-bound"]

# probabilities are ~1 / 8192 ~ 1.2e-4; the default atol (1e-4) would accept almost any output
ATOL = 1e-8


class Model(nn.Module):
    """torch.softmax along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2]


def get_init_inputs():
    return [DIM]
