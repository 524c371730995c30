"""SwiGLU: two bias-free projections of a 4096 x 4096 fp32 input to 4096 features, out = silu(x W_g^T) * (x W_u^T).

The gate/up half of a LLaMA-style MLP (without the down projection).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
HIDDEN = 4096
INTERMEDIATE = 4096

TAGS = ["fusion", "matmul", "compute-bound"]


class Model(nn.Module):
    """silu(gate_proj(x)) * up_proj(x)."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gate_proj(x)) * self.up_proj(x)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, INTERMEDIATE]
