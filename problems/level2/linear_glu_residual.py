"""ConvS2S-style GLU block: Linear (4096 x 4096 -> 8192) + GLU over the features + residual add + scale by sqrt(0.5), fp32.

a, g = split(x @ W^T + b); out = (x + a * sigmoid(g)) * sqrt(0.5).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
HIDDEN = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1001},
     "about": "a token count and hidden size that are not multiples of 32"},
    {"name": "tall", "set": {"TOKENS": 8191, "HIDDEN": 129}, "about": "many tokens with a small hidden size"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "HIDDEN": (64, 1500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """One fused (hidden -> 2 hidden) projection, gated linear unit, scaled residual."""

    def __init__(self, hidden: int):
        super().__init__()
        self.proj = nn.Linear(hidden, 2 * hidden)
        with torch.no_grad():
            self.proj.weight.mul_(2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + F.glu(self.proj(x), dim=-1)) * math.sqrt(0.5)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
