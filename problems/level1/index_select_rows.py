"""index_select of 1048576 random rows (with repeats) from a (524288, 1024) fp32 table."""
import torch
import torch.nn as nn

TABLE_ROWS = 524288
FEATURES = 1024
PICKS = 1048576

TAGS = ["indexing", "memory-bound"]
WORKLOADS = [
    {"name": "small_table", "set": {"TABLE_ROWS": 4096, "PICKS": 8192}, "public": True,
     "about": "a smaller table and fewer picks"},
    {"name": "unaligned", "set": {"TABLE_ROWS": 5000, "FEATURES": 999, "PICKS": 3001},
     "about": "a table size, a row width and a pick count that are not multiples of 32"},
    {"name": "narrow", "set": {"TABLE_ROWS": 100003, "FEATURES": 7, "PICKS": 200003},
     "about": "very narrow rows picked from a large table"},
    {"name": "drawn", "set": {"TABLE_ROWS": (10, 5000), "FEATURES": (16, 1500), "PICKS": (50, 10000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[k, :] = x[index[k], :] (torch.index_select along dim 0, int64 index)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index)


def get_inputs():
    return [torch.randn(TABLE_ROWS, FEATURES), torch.randint(0, TABLE_ROWS, (PICKS,))]


def get_init_inputs():
    return []
