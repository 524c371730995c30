"""Select clamp(x, -0.5, 1.0) where a bool mask is set and y elsewhere, on (98304, 4096) fp32 tensors."""
import torch
import torch.nn as nn

ROWS = 98304
COLS = 4096
LOW = -0.5
HIGH = 1.0

TAGS = ["elementwise", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = torch.where(mask, x.clamp(low, high), y)."""

    def __init__(self, low: float, high: float):
        super().__init__()
        self.low = low
        self.high = high

    def forward(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask, torch.clamp(x, self.low, self.high), y)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.rand(ROWS, COLS) > 0.5]


def get_init_inputs():
    return [LOW, HIGH]
