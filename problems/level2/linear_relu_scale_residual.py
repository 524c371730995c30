"""Linear (8192 x 4096 -> 4096) + ReLU + constant residual scaling + residual add, fp32.

out = x + scale * relu(x @ W^T + b), a residual MLP branch with a fixed (dropout-free) branch scale.
"""
import torch
import torch.nn as nn

BATCH = 8192
FEATURES = 4096
BRANCH_SCALE = 0.5

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "FEATURES": 1001},
     "about": "a row count and feature size that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 8191, "FEATURES": 129}, "about": "many rows of few features"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "FEATURES": (64, 1500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Residual branch: relu(Linear(x)) scaled by a constant, added back to x."""

    def __init__(self, features: int, branch_scale: float):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.branch_scale = branch_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.fc(x))
        return x + self.branch_scale * y


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES, BRANCH_SCALE]
