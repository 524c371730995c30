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
