"""Exact (erf) GELU of a 32 x 4096 x 6144 fp32 tensor (transformer MLP activations).

out = 0.5 * x * (1 + erf(x / sqrt(2)))
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
SEQ = 4096
HIDDEN = 6144

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ": 1024}, "public": True,
     "about": "a batch of one shorter sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ": 999, "HIDDEN": 1001},
     "about": "a sequence length and a hidden size that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "SEQ": (1, 500), "HIDDEN": (100, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise gelu: out = 0.5 * x * (1 + erf(x / sqrt(2)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return []
