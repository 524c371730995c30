"""Linear (8192 x 4096 -> 4096) + temperature scaling + softmax over the 4096 output features, fp32.

out = softmax((x @ W^T + b) / temperature, dim=-1).
"""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
OUT_FEATURES = 4096
TEMPERATURE = 0.5

TAGS = ["fusion", "matmul", "compute-bound"]
ATOL = 1e-6  # probabilities are ~1/4096 = 2.4e-4; the default atol (1e-4) would accept almost any output
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 4099, "IN_FEATURES": 257, "OUT_FEATURES": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": (100, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Linear, divide the logits by a temperature, softmax over the feature dim."""

    def __init__(self, in_features: int, out_features: int, temperature: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc(x) / self.temperature, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, TEMPERATURE]
