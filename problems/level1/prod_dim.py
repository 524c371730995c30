"""Product over a short dim (size 48, dim 1) of a (16384, 48, 2048) fp32 tensor with values near 1."""
import torch
import torch.nn as nn

BATCH = 16384
ROWS = 48
COLS = 2048
DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "COLS": 100003}, "public": True,
     "about": "a batch of one with a long row length that is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 33, "ROWS": 257, "COLS": 999},
     "about": "a longer reduced dim and sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 32), "ROWS": (2, 200), "COLS": (50, 2000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[b, k] = prod over j of x[b, j, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS).mul_(0.02).add_(1)]  # in place: no full-size temporaries


def get_init_inputs():
    return [DIM]
