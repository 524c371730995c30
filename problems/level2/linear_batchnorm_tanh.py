"""Linear (16384 x 2048 -> 4096) + BatchNorm1d in training mode (batch statistics) + tanh, fp32.

out = tanh(batch_norm(x @ W^T + b)), normalized with the mean and biased variance over the 16384 rows.
"""
import torch
import torch.nn as nn

BATCH = 16384
IN_FEATURES = 2048
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 6001, "IN_FEATURES": 129, "OUT_FEATURES": 257},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (3, 2000), "IN_FEATURES": (64, 1000), "OUT_FEATURES": (64, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Linear, BatchNorm1d (training mode: normalizes with batch statistics), tanh."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            self.bn.weight.copy_(0.5 + torch.rand(out_features))
            self.bn.bias.copy_(0.5 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
