"""Attention-score softmax: scale, causal mask and softmax over 1024 x 512 x 512 fp32 scores, trained: forward and
backward.

out = softmax(x * SCALE with every score above the diagonal set to -inf) along the last dim; rows are queries,
columns keys. The gradient of x is SCALE * out * (g - sum(out * g)) row by row (zero where masked). Judged: the
output and the gradient of x, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn

HEADS = 1024  # batch x heads
SEQ = 512
SCALE = 0.125  # 1 / sqrt(64)

TAGS = ["fusion", "memory-bound", "training"]
TRAINING = True
# probabilities and their gradients are about 1 / SEQ in size: with the default atol (1e-4) an error of a fifth of
# them would pass
ATOL = 1e-8
WORKLOADS = [
    {"name": "one_head", "set": {"HEADS": 1, "SEQ": 1000}, "public": True,
     "about": "a single head whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"HEADS": 37, "SEQ": 333},
     "about": "a head count and a length that are not multiples of 32"},
    {"name": "long", "set": {"HEADS": 2, "SEQ": 4099}, "about": "rows longer than one tile"},
    {"name": "drawn", "set": {"HEADS": (1, 50), "SEQ": (16, 700)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Scaled, causally masked softmax of attention scores."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[-1]
        above = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        return torch.softmax((x * self.scale).masked_fill(above, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(HEADS, SEQ, SEQ) * 4]


def get_init_inputs():
    return [SCALE]
