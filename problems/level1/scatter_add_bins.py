"""scatter_add of (8192, 65536) fp32 values into 1024 bins per row (a per-row weighted histogram).

out[i, b] = sum of src[i, j] over the j with index[i, j] == b (out starts at zero). Each bin gets ~64
positive values (sums ~32), so the order in which atomics add them changes the result by a few ulps
(~1e-5 absolute), far inside the default tolerance: two runs agree and any summation order is correct.
"""
import torch
import torch.nn as nn

ROWS = 8192
LENGTH = 65536
BINS = 1024

TAGS = ["indexing", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "LENGTH": 100003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 37, "LENGTH": 40009, "BINS": 1000},
     "about": "a row count, row length and bin count that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 64), "LENGTH": (1000, 50000), "BINS": (50, 2000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """torch.zeros(ROWS, BINS).scatter_add_(1, index, src)."""

    def __init__(self, bins: int):
        super().__init__()
        self.bins = bins

    def forward(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(src.shape[0], self.bins, dtype=src.dtype, device=src.device)
        return out.scatter_add_(1, index, src)


def get_inputs():
    return [torch.rand(ROWS, LENGTH), torch.randint(0, BINS, (ROWS, LENGTH))]


def get_init_inputs():
    return [BINS]
