"""Tanh-approximation GELU of a 24576 x 32768 fp32 matrix.

out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 24576
COLS = 32768

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a matrix of one row"},
    {"name": "unaligned", "set": {"ROWS": 1001, "COLS": 3001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


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
