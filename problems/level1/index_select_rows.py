"""index_select of 1048576 random rows (with repeats) from a (524288, 1024) fp32 table."""
import torch
import torch.nn as nn

TABLE_ROWS = 524288
FEATURES = 1024
PICKS = 1048576

TAGS = ["indexing", "memory-bound"]


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
