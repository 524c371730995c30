"""Elementwise fusion x * sigmoid(x) + bias, with a per-column bias, on a (4096, 1024) tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 1024

TAGS = ["elementwise", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 200, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "one_row", "set": {"BATCH": 1, "DIM": 4099}, "about": "a single row of odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 300), "DIM": (100, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = x[i, j] * sigmoid(x[i, j]) + bias[j]."""

    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) + self.bias


def get_inputs():
    return [torch.randn(BATCH, DIM) * 2]


def get_init_inputs():
    return [DIM]
