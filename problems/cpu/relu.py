"""Elementwise ReLU activation (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 1024

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "DIM": (100, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """ReLU: out = max(x, 0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    # Shifted so about 31% (not half) of the outputs are clamped to zero.
    return [torch.randn(BATCH, DIM) + 0.5]


def get_init_inputs():
    return []
