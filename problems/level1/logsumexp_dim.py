"""Logsumexp over the last dim of a (524288, 2048) fp32 tensor: out[i] = log(sum_j exp(x[i, j]))."""
import torch
import torch.nn as nn

ROWS = 524288
COLS = 2048
DIM = -1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"ROWS": 64, "COLS": 65537}, "public": True,
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 4099, "COLS": 999},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (50, 2000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
    {"name": "offset", "set": {"ROWS": 2049, "COLS": 257}, "shift": 100.0,
     "about": "inputs offset far from zero, so exp overflows unless the row max is subtracted"},
]


class Model(nn.Module):
    """Numerically stable log-sum-exp of each row (torch.logsumexp)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS).mul_(2)]  # in place: no full-size temporary


def get_init_inputs():
    return [DIM]
