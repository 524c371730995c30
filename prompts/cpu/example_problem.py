"""Scaled SiLU: out = scale * x * sigmoid(x), elementwise over a 1024 x 1024 fp32 matrix (CPU-sized)."""
import torch
import torch.nn as nn

ROWS = 1024
COLS = 1024


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2 + 0.5]


def get_init_inputs():
    return [1.75]
