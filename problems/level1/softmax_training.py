"""Softmax over the last dim of a 24576 x 8192 fp32 matrix, trained: forward and backward.

out[i, j] = exp(x[i, j] - max_k x[i, k]) / sum over k of exp(x[i, k] - max_k x[i, k]). Judged: the output and the
gradient of x, grad_x = out * (grad_out - sum over the row of out * grad_out), for an upstream gradient drawn anew
for every call.
"""
import torch
import torch.nn as nn

ROWS = 24576
COLS = 8192
DIM = -1

TAGS = ["softmax", "memory-bound", "training"]
TRAINING = True

# probabilities and their gradients are ~1 / 8192 ~ 1.2e-4; the default atol (1e-4) would accept almost any output
ATOL = 1e-8
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 100003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 3000), "COLS": (100, 8000)}, "about": "sizes drawn at random"},
    {"name": "offset", "set": {"ROWS": 257, "COLS": 3001}, "shift": 100.0,
     "about": "inputs offset far from zero, so exp overflows unless the max is subtracted"},
]


class Model(nn.Module):
    """torch.softmax along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2]


def get_init_inputs():
    return [DIM]
