"""SwiGLU activation of a 16384 x (2 x 4096) fp32 matrix, trained: forward and backward.

With a = x[:, :H] and b = x[:, H:]: out = silu(a) * b, of shape (16384, 4096); the gradient of x holds
g * b * silu'(a) in its first half and g * silu(a) in its second. No weights: the gated activation of a
LLaMA-style MLP on its fused gate/up projection's output. Judged: the output and the gradient of x, for an upstream
gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 16384
HIDDEN = 4096  # the output width; the input has 2 * HIDDEN columns

TAGS = ["activation", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "few_tokens", "set": {"TOKENS": 7, "HIDDEN": 11008}, "public": True,
     "about": "a few rows of a wide layer"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1001},
     "about": "a row count and a half width that are not multiples of 32 (the second half starts unaligned)"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "HIDDEN": (16, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """silu(first half of the last dim) * second half."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(TOKENS, 2 * HIDDEN)]


def get_init_inputs():
    return []
