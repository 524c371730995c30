"""L1 normalization of each row of a 65536 x 8192 fp32 matrix: x / sum |x| over the last dim.

out[i, j] = x[i, j] / sum over k of |x[i, k]|   (each row's absolute values then sum to 1).
"""
import torch
import torch.nn as nn

ROWS = 65536
COLS = 8192
DIM = 1

TAGS = ["normalization", "memory-bound"]

# outputs are ~1 / (0.8 * 8192) ~ 1.5e-4 in magnitude; the default atol (1e-4) would accept almost anything
ATOL = 1e-7
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 16, "COLS": 100003}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 6000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Divides by the L1 norm along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / x.abs().sum(dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
