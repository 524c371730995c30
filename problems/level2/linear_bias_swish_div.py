"""Bias-free Linear (4096 x 8192 -> 4096) + separate bias add + Swish + division by a constant, fp32.

out = swish(x @ W^T + b) / 2, swish(v) = v * sigmoid(v).
"""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 8192
OUT_FEATURES = 4096
DIVISOR = 2.0

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
    """Linear without bias, then + bias, v * sigmoid(v), / divisor."""

    def __init__(self, in_features: int, out_features: int, divisor: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(0.5 * torch.randn(out_features))
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x) + self.bias
        y = y * torch.sigmoid(y)
        return y / self.divisor


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, DIVISOR]
