"""Linear (1024 x 4096 -> 8192, with bias) + exact (erf) GELU, fp32, trained: forward and backward.

out = gelu(x @ W^T + b), the first half of a transformer FFN. x is drawn at a quarter of the unit scale (the
activations of a normalised layer), so that the gradient of W, a sum over the rows, stays well within fp32's reach at
the 1e-4 tolerance. Judged: the output, the gradient of x and the gradients of the weight and bias, for an upstream
gradient drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1024
IN_FEATURES = 4096
OUT_FEATURES = 8192

TAGS = ["fusion", "matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 1031, "IN_FEATURES": 257, "OUT_FEATURES": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Linear, then GELU (erf form); the bias drawn wider than nn.Linear's so that it matters."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        nn.init.uniform_(self.linear.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES) * 0.25]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
