"""Feature self-gating: Linear (8192 x 4096 -> 4096) + sigmoid, multiplied back onto the input, fp32.

out = x * sigmoid(x @ W^T + b) (a learned per-feature gate computed from the same features).
"""
import torch
import torch.nn as nn

BATCH = 8192
FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "FEATURES": 1001},
     "about": "a row count and feature size that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 8191, "FEATURES": 129}, "about": "many rows of few features"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "FEATURES": (64, 1500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Gate = sigmoid(Linear(x)); out = x * gate."""

    def __init__(self, features: int):
        super().__init__()
        self.gate = nn.Linear(features, features)
        with torch.no_grad():
            self.gate.weight.mul_(3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.gate(x))


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
