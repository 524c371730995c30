"""SiLU / swish of a 16 x 8192 x 6144 fp32 tensor.

out = x * sigmoid(x)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
SEQ = 8192
HIDDEN = 6144

TAGS = ["activation", "memory-bound"]


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
