"""Elementwise GELU activation with the tanh approximation (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 1024
DIM = 1024

TAGS = ["activation", "memory-bound"]


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
