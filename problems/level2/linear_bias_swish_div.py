"""Bias-free Linear (4096 x 8192 -> 4096) + separate bias add + Swish + division by a constant, fp32.

out = swish(x @ W^T + b) / 2, swish(v) = v * sigmoid(v).
"""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 8192
OUT_FEATURES = 4096
DIVISOR = 2.0

TAGS = ["fusion", "matmul", "compute-bound"]


class Model(nn.Module):
    """Linear without bias, then + bias, v * sigmoid(v), / divisor."""

    def __init__(self, in_features: int, out_features: int, divisor: float):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(0.5 * torch.randn(out_features))
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x) + self.bias
        y = y * torch.sigmoid(y)
        return y / self.divisor


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, DIVISOR]
