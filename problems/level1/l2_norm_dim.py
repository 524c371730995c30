"""L2 norm over the last dim of a (393216, 4096) fp32 tensor: out[i] = sqrt(sum_j x[i, j]^2)."""
import torch
import torch.nn as nn

ROWS = 393216
COLS = 4096
DIM = -1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 16, "COLS": 100003}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"ROWS": (33, 1500), "COLS": (100, 6000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Euclidean norm of each row (torch.linalg.vector_norm, ord 2)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
