"""Local response normalization across channels (size 5, alpha 0.5, beta 0.75, k 1) of a 32 x 128 x 256 x 256 fp32 tensor.

out[n, c] = x[n, c] / (k + alpha * mean over c' in [c - 2, c + 2] of x[n, c']^2)^beta,
where channels outside [0, C) count as zeros in the mean (the divisor is always 5).
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
SIZE = 5
ALPHA = 0.5
BETA = 0.75
K = 1.0

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 63, "WIDTH": 65}, "public": True,
     "about": "a single small image"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 45, "WIDTH": 51},
     "about": "channel and spatial sizes that are not multiples of 32"},
    {"name": "few_channels", "set": {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 100, "WIDTH": 129},
     "about": "fewer channels than the normalization window"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (2, 200), "HEIGHT": (8, 80), "WIDTH": (8, 80)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.LocalResponseNorm(size, alpha, beta, k) on NCHW input (eager: several full-size intermediates)."""

    def __init__(self, size: int, alpha: float, beta: float, k: float):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(size, alpha=alpha, beta=beta, k=k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lrn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [SIZE, ALPHA, BETA, K]
