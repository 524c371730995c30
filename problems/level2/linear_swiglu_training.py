"""SwiGLU from one fused projection: 2048 x 2048 -> 2 x 4096 (no bias), out = silu(a) * b, fp32, trained: forward
and backward.

[a, b] = x @ W^T split in halves along the features; the gate/up half of a LLaMA-style MLP with its two projections
stored as one weight. x is drawn at half the unit scale, so that the gradient of W, a sum over the rows, stays well
within fp32's reach at the 1e-4 tolerance. Judged: the output, the gradient of x and the gradient of the weight, for
an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 2048
HIDDEN = 2048
INTERMEDIATE = 4096

TAGS = ["fusion", "matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_row", "set": {"TOKENS": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1000, "INTERMEDIATE": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"TOKENS": 2053, "HIDDEN": 257, "INTERMEDIATE": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "HIDDEN": (64, 1500), "INTERMEDIATE": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """a, b = gate_up_proj(x).chunk(2, dim=-1); out = silu(a) * b."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * intermediate, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.gate_up_proj(x).chunk(2, dim=-1)
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN) * 0.5]


def get_init_inputs():
    return [HIDDEN, INTERMEDIATE]
