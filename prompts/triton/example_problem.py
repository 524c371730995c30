"""Scaled SiLU: out = scale * x * sigmoid(x), elementwise over a 4096 x 4096 fp32 matrix."""
import torch
import torch.nn as nn

ROWS = 4096
COLS = 4096


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
