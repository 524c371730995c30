"""Variance (unbiased) and mean over dim 1 of a (128, 2048, 6144) fp32 tensor, returned as a pair.

(var, mean) = torch.var_mean(x, dim=1, correction=1): var[b, k] = sum_j (x[b, j, k] - mean[b, k])^2 / (N - 1).
"""
import torch
import torch.nn as nn

BATCH = 128
ROWS = 2048
COLS = 6144
DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "COLS": 1001}, "public": True,
     "about": "a batch of one with a row length that is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "ROWS": 999, "COLS": 2049},
     "about": "a reduced length and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "ROWS": (2, 1500), "COLS": (50, 800)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Mean and unbiased variance over `dim` (a strided, middle dimension)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        var, mean = torch.var_mean(x, dim=self.dim, correction=1)
        return var, mean


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS).mul_(2).add_(1)]  # in place: no full-size temporaries


def get_init_inputs():
    return [DIM]
