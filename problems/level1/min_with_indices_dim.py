"""Min over dim 1 of a (64, 4096, 6144) fp32 tensor, returning (values, int64 indices) like torch.min(x, dim)."""
import torch
import torch.nn as nn

BATCH = 64
ROWS = 4096
COLS = 6144
DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "COLS": 1001}, "public": True,
     "about": "a batch of one with a row length that is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "ROWS": 999, "COLS": 257},
     "about": "a reduced length and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "ROWS": (10, 2000), "COLS": (50, 1000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """values[b, k] = min over j of x[b, j, k]; indices[b, k] = the j where it is attained (a strided middle dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.min(x, dim=self.dim)
        return values, indices


def get_inputs():
    return [torch.randn(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DIM]
