"""Layer normalization over the last dimension with an elementwise affine transform, trained: forward and backward
(CPU-sized).

Judged: the output, the gradient of x and the gradients of the weight and bias, for an upstream gradient drawn
anew for every call.
"""
import torch
import torch.nn as nn

BATCH = 2048
HIDDEN = 1024

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 200, "HIDDEN": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 300), "HIDDEN": (16, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """LayerNorm: out = (x - mean) / sqrt(var + eps) * weight + bias, statistics per row (eps = 1e-5), with random
    affine parameters so that their gradients matter."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
