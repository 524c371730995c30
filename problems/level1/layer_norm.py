"""LayerNorm over the last two dims (96 x 1024) of an 8192 x 96 x 1024 fp32 tensor, with affine.

For each of the 8192 rows of 98304 values: out = (x - mean) / sqrt(var + eps) * weight + bias,
with weight and bias of shape (96, 1024).
"""
import torch
import torch.nn as nn

BATCH = 8192
DIM1 = 96
DIM2 = 1024

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1}, "public": True, "about": "a batch of one sample"},
    {"name": "unaligned", "set": {"BATCH": 33, "DIM1": 7, "DIM2": 1001},
     "about": "a batch and normalized shape that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 64), "DIM1": (1, 40), "DIM2": (100, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.LayerNorm((dim1, dim2)) with random elementwise affine parameters."""

    def __init__(self, dim1: int, dim2: int):
        super().__init__()
        self.ln = nn.LayerNorm((dim1, dim2))
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 2 + 0.5]


def get_init_inputs():
    return [DIM1, DIM2]
