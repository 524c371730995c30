"""Linear layer (512 -> 1024, with bias) followed by ReLU on a batch of 512 rows (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 512
IN_FEATURES = 512
OUT_FEATURES = 1024

TAGS = ["gemm-fusion", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 100, "IN_FEATURES": 257, "OUT_FEATURES": 300},
     "about": "a batch and feature counts that are not multiples of 32"},
    {"name": "one_row", "set": {"BATCH": 1}, "about": "a batch of one row"},
    {"name": "drawn", "set": {"BATCH": (1, 150), "IN_FEATURES": (8, 500), "OUT_FEATURES": (8, 400)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = relu(x @ W^T + b)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
