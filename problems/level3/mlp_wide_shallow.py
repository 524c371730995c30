"""Wide shallow MLP: Linear 1024->16384, ReLU, Linear 16384->1024 on an (8192, 1024) fp32 batch.

out = relu(x @ W1^T + b1) @ W2^T + b2; the (8192, 16384) hidden activation is the big intermediate.
"""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 1024
HIDDEN = 16384
OUT_FEATURES = 1024

TAGS = ["architecture", "mlp", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 100, "IN_FEATURES": 1000, "HIDDEN": 10000, "OUT_FEATURES": 999},
     "about": "a batch and widths that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 120), "HIDDEN": (2000, 8000)},
     "about": "batch and hidden width drawn at random"},
]


class Model(nn.Module):
    """One very wide hidden layer."""

    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
