"""torch.matmul of (16, 512, 4096) activations with a (4096, 4096) weight + bias + clamp to [-1, 1] + Mish, fp32.

out = mish(clamp(x @ W + b, -1, 1)), mish(v) = v * tanh(softplus(v)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
SEQ_LEN = 512
IN_FEATURES = 4096
OUT_FEATURES = 4096
CLAMP_MIN = -1.0
CLAMP_MAX = 1.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1, "SEQ_LEN": 1}, "public": True, "about": "a single row"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 333, "IN_FEATURES": 1000, "OUT_FEATURES": 1001},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "SEQ_LEN": (1, 300), "IN_FEATURES": (64, 1500),
                              "OUT_FEATURES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Broadcasting 3-D @ 2-D matmul with a (in, out) weight, bias, clamp, Mish."""

    def __init__(self, in_features: int, out_features: int, clamp_min: float, clamp_max: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.bias = nn.Parameter(0.2 * torch.randn(out_features))
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.weight) + self.bias
        y = torch.clamp(y, self.clamp_min, self.clamp_max)
        return F.mish(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, CLAMP_MIN, CLAMP_MAX]
