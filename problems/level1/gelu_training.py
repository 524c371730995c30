"""Exact (erf) GELU of an 8 x 4096 x 6144 fp32 tensor, trained: forward and backward.

out = 0.5 * x * (1 + erf(x / sqrt(2))); grad_x = g * (Phi(x) + x * phi(x)), with Phi and phi the standard normal
cdf and density. Judged: the output and the gradient of x, for an upstream gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 4096
HIDDEN = 6144

TAGS = ["activation", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ": 1024}, "public": True,
     "about": "a batch of one shorter sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ": 999, "HIDDEN": 1001},
     "about": "a sequence length and a hidden size that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "SEQ": (1, 500), "HIDDEN": (100, 5000)},
     "about": "sizes drawn at random"},
    {"name": "large_magnitude", "set": {"BATCH": 2, "SEQ": 129, "HIDDEN": 2049}, "scale": 6.0,
     "about": "inputs of large magnitude, reaching where the gradient is ~0 or ~1"},
]


class Model(nn.Module):
    """Elementwise gelu (exact, erf form)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return []
