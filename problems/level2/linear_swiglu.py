"""SwiGLU: two bias-free projections of a 4096 x 4096 fp32 input to 4096 features, out = silu(x W_g^T) * (x W_u^T).

The gate/up half of a LLaMA-style MLP (without the down projection).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
HIDDEN = 4096
INTERMEDIATE = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"TOKENS": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1000, "INTERMEDIATE": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"TOKENS": 4099, "HIDDEN": 257, "INTERMEDIATE": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "HIDDEN": (64, 1500), "INTERMEDIATE": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """silu(gate_proj(x)) * up_proj(x)."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gate_proj(x)) * self.up_proj(x)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, INTERMEDIATE]
