"""Elementwise GELU activation with the tanh approximation (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 1024
DIM = 1024

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 97, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 100), "DIM": (100, 1000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """GELU (tanh): out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
