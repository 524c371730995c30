"""Linear (8192 x 4096 -> 4096) + elementwise min with a learned per-channel cap + subtract a learned offset + Hardtanh, fp32.

out = hardtanh(minimum(x @ W^T + b, cap) - offset, -1, 1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 4096
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 4099, "IN_FEATURES": 257, "OUT_FEATURES": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Linear, cap each channel from above, shift, clip to [-1, 1]."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.cap = nn.Parameter(0.5 + 0.3 * torch.randn(out_features))
        self.offset = nn.Parameter(0.3 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.minimum(self.fc(x), self.cap)
        y = y - self.offset
        return F.hardtanh(y, -1.0, 1.0)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
