"""Gaussian Fourier feature mapping: (16384 x 1024) @ fixed random (1024 x 8192) matrix, times 2 pi, then [sin, cos] concatenated, fp32.

proj = 2 pi x @ B; out = cat(sin(proj), cos(proj), dim=-1), shape (16384, 16384).
"""
import math

import torch
import torch.nn as nn

NUM_POINTS = 16384
IN_DIM = 1024
NUM_FREQS = 8192
SIGMA = 0.015

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_point", "set": {"NUM_POINTS": 1}, "public": True, "about": "a single point"},
    {"name": "unaligned", "set": {"NUM_POINTS": 999, "IN_DIM": 257, "NUM_FREQS": 1001},
     "about": "point, input and frequency counts that are not multiples of 32"},
    {"name": "drawn", "set": {"NUM_POINTS": (1, 700), "IN_DIM": (16, 1024), "NUM_FREQS": (64, 2000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Random Fourier features with a fixed Gaussian frequency matrix (a buffer)."""

    def __init__(self, in_dim: int, num_freqs: int, sigma: float):
        super().__init__()
        self.register_buffer("freqs", torch.randn(in_dim, num_freqs) * sigma)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        proj = 2.0 * math.pi * torch.matmul(x, self.freqs)
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


def get_inputs():
    return [torch.randn(NUM_POINTS, IN_DIM)]


def get_init_inputs():
    return [IN_DIM, NUM_FREQS, SIGMA]
