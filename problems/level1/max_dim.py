"""Max over the last dim of a (393216, 4096) fp32 tensor (values only, torch.amax)."""
import torch
import torch.nn as nn

ROWS = 393216
COLS = 4096
DIM = -1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"ROWS": 64, "COLS": 65537}, "public": True,
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 4099, "COLS": 999},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (50, 2000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i] = max over j of x[i, j]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
