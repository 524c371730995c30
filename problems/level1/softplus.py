"""Softplus (beta 1, threshold 20) of a 64 x 96 x 256 x 512 fp32 tensor.

out = log(1 + exp(beta * x)) / beta, or x where beta * x > threshold
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 96
HEIGHT = 256
WIDTH = 512
BETA = 1.0
THRESHOLD = 20.0

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
    """Elementwise softplus: out = log(1 + exp(beta * x)) / beta, or x where beta * x > threshold."""

    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [BETA, THRESHOLD]
