"""Gather 16384 random rows of a (32768, 256) table by index (embedding lookup, CPU-sized)."""
import torch
import torch.nn as nn

NUM_ROWS = 32768
ROW_DIM = 256
NUM_INDICES = 16384

TAGS = ["gather", "memory-bound"]
# Minimal traffic: the rows the random indices touch (expected distinct rows, ~39% of the table),
# the indices and the output; the whole table need not be read.
BYTES = 4 * ROW_DIM * (NUM_ROWS * (1 - (1 - 1 / NUM_ROWS) ** NUM_INDICES) + NUM_INDICES) + 8 * NUM_INDICES
WORKLOADS = [
    {"name": "unaligned", "set": {"NUM_ROWS": 1000, "ROW_DIM": 257, "NUM_INDICES": 999},
     "about": "a table, row length and index count that are not multiples of 32"},
    {"name": "narrow_rows", "set": {"NUM_ROWS": 5000, "ROW_DIM": 3, "NUM_INDICES": 20001},
     "about": "very short rows and many indices"},
    {"name": "drawn", "set": {"NUM_ROWS": (2, 3000), "ROW_DIM": (5, 600), "NUM_INDICES": (10, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, :] = table[idx[i], :] (index_select along dim 0; indices repeat and are unsorted)."""

    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.index_select(table, 0, idx)


def get_inputs():
    return [torch.randn(NUM_ROWS, ROW_DIM), torch.randint(0, NUM_ROWS, (NUM_INDICES,))]


def get_init_inputs():
    return []
