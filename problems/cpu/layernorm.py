"""Layer normalization over the last dimension with an elementwise affine transform (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
HIDDEN = 1024

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 200, "HIDDEN": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 7, "HIDDEN": 30011}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 300), "HIDDEN": (16, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """LayerNorm: out = (x - mean) / sqrt(var + eps) * weight + bias, statistics per row (eps = 1e-5)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
