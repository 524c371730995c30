"""Gaussian (RBF) kernel matrix between 8192 x 2048 and 8192 x 2048 point sets via the matmul expansion of squared distances, fp32.

d2 = |x_i|^2 + |y_j|^2 - 2 x_i . y_j (clamped at 0); out = outputscale * exp(-d2 / (2 lengthscale^2)), shape (8192, 8192).
"""
import math

import torch
import torch.nn as nn

NUM_X = 8192
NUM_Y = 8192
DIM = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_point", "set": {"NUM_X": 1}, "public": True, "about": "a single point on one side"},
    {"name": "unaligned", "set": {"NUM_X": 999, "NUM_Y": 1001, "DIM": 257},
     "about": "point counts and a dimension that are not multiples of 32, the two sides different"},
    {"name": "drawn", "set": {"NUM_X": (2, 700), "NUM_Y": (50, 1200), "DIM": (16, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """GP-style RBF kernel with learned (log) lengthscale and output scale."""

    def __init__(self, dim: int):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(0.5 * math.log(dim / 2.0)))
        self.outputscale = nn.Parameter(torch.tensor(1.5))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        cross = torch.matmul(x, y.t())
        d2 = (x * x).sum(dim=-1, keepdim=True) + (y * y).sum(dim=-1) - 2.0 * cross
        d2 = d2.clamp_min(0.0)
        return self.outputscale * torch.exp(-0.5 * d2 / torch.exp(2.0 * self.log_lengthscale))


def get_inputs():
    # points of varying scale, so kernel values spread over (0.01, 0.6)
    x = torch.randn(NUM_X, DIM) * (torch.rand(NUM_X, 1) + 0.5)
    y = torch.randn(NUM_Y, DIM) * (torch.rand(NUM_Y, 1) + 0.5)
    return [x, y]


def get_init_inputs():
    return [DIM]
