"""Index of the maximum along the last dimension of a (4096, 2048) tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 2048

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 777, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 7, "DIM": 50001}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (16, 500), "DIM": (10, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Argmax over dim 1: out[i] = argmax_j x[i, j] (int64; inputs are continuous, so ties do not occur)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
