"""SwiGLU MLP with residual: x + down(silu(gate(x)) * up(x)), 1024 tokens, hidden 2048, intermediate 5632, fp32,
trained: forward and backward.

Three bias-free projections (2048 -> 5632, 2048 -> 5632, 5632 -> 2048), SiLU gate, elementwise product and the
residual add of a LLaMA-style transformer MLP block. x is drawn at half the unit scale, so that the gradients of the
projections, sums over the tokens, stay well within fp32's reach at the 1e-4 tolerance. Judged: the output, the
gradient of x and the gradients of the three projections' weights, for an upstream gradient drawn anew for every
call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 1024
HIDDEN = 2048
INTERMEDIATE = 5632

TAGS = ["fusion", "matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 129, "HIDDEN": 1000, "INTERMEDIATE": 2731},
     "about": "a token count, hidden size and intermediate size that are not multiples of 32"},
    {"name": "drawn", "set": {"TOKENS": (1, 300), "HIDDEN": (100, 1500), "INTERMEDIATE": (100, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = x + down_proj(silu(gate_proj(x)) * up_proj(x))."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        with torch.no_grad():  # larger down projection so the branch is not swamped by the residual
            self.down_proj.weight.mul_(4.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN) * 0.5]


def get_init_inputs():
    return [HIDDEN, INTERMEDIATE]
