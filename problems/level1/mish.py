"""Mish of a 128 x 96 x 256 x 256 fp32 tensor.

out = x * tanh(softplus(x))
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
CHANNELS = 96
HEIGHT = 256
WIDTH = 256

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 257, "WIDTH": 511}, "public": True,
     "about": "a single image with few channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 99, "WIDTH": 131},
     "about": "channel and spatial sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (2, 32), "HEIGHT": (9, 160), "WIDTH": (9, 250)},
     "about": "sizes drawn at random"},
    {"name": "large_magnitude", "set": {"BATCH": 2, "CHANNELS": 5, "HEIGHT": 129, "WIDTH": 257}, "scale": 40.0,
     "about": "inputs of large magnitude, far into the saturated range"},
]


class Model(nn.Module):
    """Elementwise mish: out = x * tanh(softplus(x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
