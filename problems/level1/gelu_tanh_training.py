"""Tanh-approximation GELU of a 24576 x 8192 fp32 matrix, trained: forward and backward.

out = 0.5 * x * (1 + tanh(u)), u = sqrt(2 / pi) * (x + 0.044715 * x^3); the backward is the derivative of that
expression (not of the exact erf GELU). Judged: the output and the gradient of x, for an upstream gradient drawn
anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 24576
COLS = 8192

TAGS = ["activation", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 1001, "COLS": 3001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
    {"name": "large_magnitude", "set": {"ROWS": 257, "COLS": 2049}, "scale": 6.0,
     "about": "inputs of large magnitude, reaching where the gradient is ~0 or ~1"},
]


class Model(nn.Module):
    """Elementwise gelu with approximate='tanh'."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
