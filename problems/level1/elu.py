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
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 17, "HEIGHT": 99, "WIDTH": 257},
     "about": "sizes that are not multiples of 32 (an element count that is not either)"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (1, 32), "HEIGHT": (3, 200), "WIDTH": (5, 300)},
     "about": "sizes drawn at random"},
]


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
