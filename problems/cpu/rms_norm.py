"""RMS normalization over the last dimension with a learned scale, on a (4096, 1024) tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
HIDDEN = 1024
EPS = 1e-6

TAGS = ["normalization", "memory-bound"]


class Model(nn.Module):
    """RMSNorm: out = x / sqrt(mean(x^2 over the last dim) + eps) * weight."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.5 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(BATCH, HIDDEN) * 3]


def get_init_inputs():
    return [HIDDEN, EPS]
