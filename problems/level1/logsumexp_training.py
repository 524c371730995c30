"""Log-sum-exp over the last dim of a 65536 x 4096 fp32 matrix, trained: forward and backward.

out[i] = log(sum_j exp(x[i, j])), one value per row; the gradient of x is softmax(x) times each row's upstream
gradient. Judged: the output and the gradient of x, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn

ROWS = 65536
COLS = 4096

TAGS = ["reduction", "memory-bound", "training"]
TRAINING = True
# the gradient of x is softmax(x) * g, about 1 / COLS (2.4e-4) in size: with the default atol (1e-4) an error of
# half its size would pass
ATOL = 1e-8
WORKLOADS = [
    {"name": "long_rows", "set": {"ROWS": 16, "COLS": 65537}, "public": True,
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 4099, "COLS": 999},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (2, 2000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
    {"name": "offset", "set": {"ROWS": 2049, "COLS": 257}, "shift": 100.0,
     "about": "inputs offset far from zero, so exp overflows unless the row max is subtracted"},
]


class Model(nn.Module):
    """Numerically stable log-sum-exp of each row (torch.logsumexp)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS).mul_(2)]  # in place: no full-size temporary


def get_init_inputs():
    return []
