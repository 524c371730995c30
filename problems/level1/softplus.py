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
