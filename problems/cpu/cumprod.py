"""Cumulative product along the last dimension of a (1024, 2048) tensor of values near 1 (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 1024
N = 2048
DIM = 1

TAGS = ["scan", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 99, "N": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 5, "N": 20001}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 200), "N": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Cumulative product: out[i, j] = prod_{k <= j} x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    # Factors near 1 keep the running products O(1) (log-product std ~0.45 at the end of a row).
    return [1 + 0.01 * torch.randn(BATCH, N)]


def get_init_inputs():
    return [DIM]
