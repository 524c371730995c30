"""Cumulative sum of the elements selected by a boolean mask, along a dimension (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 256
N = 4096
DIM = 1

TAGS = ["scan", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 33, "N": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 3, "N": 30001}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 100), "N": (50, 2000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Masked cumulative sum: out[i, j] = sum_{k <= j} x[i, k] * mask[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.rand(BATCH, N)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [DIM]
