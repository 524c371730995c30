"""torch.addcmul(a, b, c, value=0.5) on three (98304, 4096) fp32 tensors: out = a + 0.5 * b * c."""
import torch
import torch.nn as nn

ROWS = 98304
COLS = 4096
VALUE = 0.5

TAGS = ["elementwise", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "tensors of one row"},
    {"name": "unaligned", "set": {"ROWS": 1001, "COLS": 3001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = a[i, j] + value * b[i, j] * c[i, j]."""

    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(a, b, c, value=self.value)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [VALUE]
