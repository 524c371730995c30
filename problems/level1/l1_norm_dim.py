"""L1 norm (sum of absolute values) over dim 1 of a (64, 4096, 4096) fp32 tensor, keeping the dim."""
import torch
import torch.nn as nn

BATCH = 64
ROWS = 4096
COLS = 4096
DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "ROWS": 1024}, "public": True,
     "about": "a batch of one shorter matrix"},
    {"name": "unaligned", "set": {"BATCH": 3, "ROWS": 1000, "COLS": 999},
     "about": "a reduced dim and a kept dim that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 2, "ROWS": 50001, "COLS": 33}, "about": "a long reduced dim and few columns"},
    {"name": "wide", "set": {"BATCH": 2, "ROWS": 7, "COLS": 50001}, "about": "a short reduced dim and many columns"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "ROWS": (40, 2000), "COLS": (40, 2000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[b, 0, k] = sum over j of |x[b, j, k]| (written as abs then sum: two passes in eager)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(torch.abs(x), dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DIM]
