"""Linear layer (512 -> 1024, with bias) followed by exact (erf) GELU on a batch of 512 rows, trained: forward and
backward (CPU-sized).

Judged: the output, the gradient of x and the gradients of the weight and bias, for an upstream gradient drawn anew
for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 512
IN_FEATURES = 512
OUT_FEATURES = 1024

TAGS = ["gemm-fusion", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 100, "IN_FEATURES": 257, "OUT_FEATURES": 300},
     "about": "a batch and feature counts that are not multiples of 32"},
    {"name": "one_row", "set": {"BATCH": 1}, "about": "a batch of one row"},
    {"name": "drawn", "set": {"BATCH": (1, 150), "IN_FEATURES": (8, 500), "OUT_FEATURES": (8, 400)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = gelu(x @ W^T + b), GELU in its erf form; the bias drawn wider than nn.Linear's so that it matters."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        nn.init.uniform_(self.linear.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
