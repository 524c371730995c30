"""Layer normalization over the last dimension with an elementwise affine transform (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
HIDDEN = 1024

TAGS = ["normalization", "memory-bound"]


class Model(nn.Module):
    """LayerNorm: out = (x - mean) / sqrt(var + eps) * weight + bias, statistics per row (eps = 1e-5)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
