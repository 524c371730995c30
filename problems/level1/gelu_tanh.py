"""Tanh-approximation GELU of a 24576 x 32768 fp32 matrix.

out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 24576
COLS = 32768

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise gelu tanh: out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
