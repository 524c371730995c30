"""LogSoftmax over the last dim of a 24576 x 8192 fp32 matrix, trained: forward and backward.

out[i, j] = x[i, j] - max_k x[i, k] - log(sum over k of exp(x[i, k] - max_k x[i, k])); the backward gives
grad_x[i, j] = g[i, j] - softmax(x)[i, j] * sum over k of g[i, k]. Judged: the output and the gradient of x, for an
upstream gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn

ROWS = 24576
COLS = 8192

TAGS = ["softmax", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "short_rows", "set": {"ROWS": 4096, "COLS": 100}, "public": True,
     "about": "many short rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 3, "COLS": 100003},
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 600), "COLS": (100, 8000)}, "about": "sizes drawn at random"},
    {"name": "offset", "set": {"ROWS": 257, "COLS": 3001}, "shift": 100.0,
     "about": "inputs offset far from zero, so exp overflows unless the max is subtracted"},
]


class Model(nn.Module):
    """torch.log_softmax along the last dim."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2]


def get_init_inputs():
    return []
