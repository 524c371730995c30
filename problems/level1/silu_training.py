"""SiLU / swish of an 8 x 4096 x 6144 fp32 tensor, trained: forward and backward.

out = x * sigmoid(x); grad_x = g * sigmoid(x) * (1 + x * (1 - sigmoid(x))). Judged: the output and the gradient of
x, for an upstream gradient g drawn anew for every call.
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
    {"name": "one_row", "set": {"BATCH": 1, "SEQ": 1, "HIDDEN": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ": 333, "HIDDEN": 1001},
     "about": "sequence and hidden sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "SEQ": (1, 500), "HIDDEN": (100, 3000)},
     "about": "sizes drawn at random"},
    {"name": "large_magnitude", "set": {"BATCH": 2, "SEQ": 129, "HIDDEN": 2049}, "scale": 12.0,
     "about": "inputs of large magnitude, far into the saturated range"},
]


class Model(nn.Module):
    """Elementwise silu: out = x * sigmoid(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return []
