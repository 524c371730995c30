"""Residual add then RMSNorm over the last dim (16384) of 6144 x 16384 fp32 inputs, trained.

h = x + residual; out = h / sqrt(mean(h^2 over the row) + eps) * weight. Two outputs, (out, h): h is the
residual stream the next block adds to, so it gets an upstream gradient of its own. Judged: both outputs, the
gradients of x and residual, and the gradient of weight, for upstream gradients drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 6144
HIDDEN = 16384
EPS = 1e-6

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 5, "HIDDEN": 8192}, "public": True,
     "about": "a few rows"},
    {"name": "unaligned", "set": {"ROWS": 999, "HIDDEN": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 33, "HIDDEN": 30011},
     "about": "a few rows longer than one block's worth, of a length that is not a multiple of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 600), "HIDDEN": (100, 8000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """(rms_norm(x + residual) * weight, x + residual), with a random weight so its gradient matters."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x + residual
        return F.rms_norm(h, (h.shape[-1],), self.weight, self.eps), h


def get_inputs():
    return [torch.randn(ROWS, HIDDEN), torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, EPS]
