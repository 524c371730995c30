"""ELU (alpha 1.0) of a 128 x 64 x 256 x 384 fp32 tensor.

out = x if x > 0 else alpha * (exp(x) - 1)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
CHANNELS = 64
HEIGHT = 256
WIDTH = 384
ALPHA = 1.0

TAGS = ["activation", "memory-bound"]


class Model(nn.Module):
    """Elementwise elu: out = x if x > 0 else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [ALPHA]
