"""Softmax over very long rows: last dim of a 3072 x 262144 fp32 matrix with inputs around +100.

out[i, j] = exp(x[i, j] - max_k x[i, k]) / sum over k of exp(x[i, k] - max_k x[i, k]).
A row (1 MiB) does not fit in one block's shared memory, and the inputs are offset by +100 so that exp(x)
overflows fp32 unless the row max is subtracted: a kernel needs a max-stable (e.g. online) softmax.
"""
import torch
import torch.nn as nn

ROWS = 3072
COLS = 262144
DIM = -1

TAGS = ["softmax", "memory-bound"]

# probabilities are ~1 / 262144 ~ 3.8e-6; the default atol (1e-4) would accept zeros
ATOL = 1e-11
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 3, "COLS": 1000003}, "public": True,
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 64, "COLS": 100003},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "short_rows", "set": {"ROWS": 999, "COLS": 1001}, "about": "many rows short enough to fit in one block"},
    {"name": "drawn", "set": {"ROWS": (1, 32), "COLS": (1000, 300000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """torch.softmax along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2 + 100]


def get_init_inputs():
    return [DIM]
