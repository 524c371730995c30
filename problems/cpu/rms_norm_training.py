"""RMS normalization over the last dimension with a learned scale, trained: forward and backward (CPU-sized).

Judged: the output, the gradient of x and the gradient of the weight, for an upstream gradient drawn anew for every
call.
"""
import torch
import torch.nn as nn

BATCH = 2048
HIDDEN = 1024
EPS = 1e-6

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 200, "HIDDEN": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 7, "HIDDEN": 30011}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 300), "HIDDEN": (16, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """RMSNorm: out = x / sqrt(mean(x^2 over the last dim) + eps) * weight, with a random weight so that its gradient
    matters."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(BATCH, HIDDEN) * 3]


def get_init_inputs():
    return [HIDDEN, EPS]
