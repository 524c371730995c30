"""L1 norm (sum of absolute values) over dim 1 of a (64, 4096, 4096) fp32 tensor, keeping the dim."""
import torch
import torch.nn as nn

BATCH = 64
ROWS = 4096
COLS = 4096
DIM = 1

TAGS = ["reduction", "memory-bound"]


class Model(nn.Module):
    """out[b, 0, k] = sum over j of |x[b, j, k]| (written as abs then sum: two passes in eager)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(torch.abs(x), dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DIM]
