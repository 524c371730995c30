"""Elementwise power base ** exponent of two (131072, 4096) fp32 tensors, base positive in [0.5, 1.5)."""
import torch
import torch.nn as nn

ROWS = 131072
COLS = 4096

TAGS = ["elementwise", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = base[i, j] ** exponent[i, j] (torch.pow with a tensor exponent)."""

    def __init__(self):
        super().__init__()

    def forward(self, base: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
        return torch.pow(base, exponent)


def get_inputs():
    # base = U[0, 1) + 0.5 (in place: no extra temporary), exponent ~ N(0, 1)
    return [torch.rand(ROWS, COLS).add_(0.5), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
