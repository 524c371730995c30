"""Frobenius-norm normalization of a whole 16 x 64 x 768 x 1024 fp32 tensor: x / ||x||_F.

norm = sqrt(sum of x^2 over all 805M elements) (a single global reduction); out = x / norm.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 768
WIDTH = 1024

TAGS = ["normalization", "memory-bound"]

# outputs are ~1 / sqrt(805M) ~ 3.5e-5 in magnitude; the default atol (1e-4) would accept zeros
ATOL = 1e-9
WORKLOADS = [
    {"name": "one_slice", "set": {"BATCH": 1, "CHANNELS": 1}, "public": True,
     "about": "a much smaller tensor (one sample, one channel)"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 1, "HEIGHT": 299, "WIDTH": 1001},
     "about": "sizes that are not multiples of 32 (an element count that is not either)"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "CHANNELS": (1, 2), "HEIGHT": (1, 250), "WIDTH": (50, 1000)},
     "about": "sizes drawn at random, down to a tensor of a few dozen elements"},
]


class Model(nn.Module):
    """Divides every element by the Frobenius norm of the whole tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.linalg.vector_norm(x, ord=2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
