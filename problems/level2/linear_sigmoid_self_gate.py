"""Feature self-gating: Linear (8192 x 4096 -> 4096) + sigmoid, multiplied back onto the input, fp32.

out = x * sigmoid(x @ W^T + b) (a learned per-feature gate computed from the same features).
"""
import torch
import torch.nn as nn

BATCH = 8192
FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]


class Model(nn.Module):
    """Gate = sigmoid(Linear(x)); out = x * gate."""

    def __init__(self, features: int):
        super().__init__()
        self.gate = nn.Linear(features, features)
        with torch.no_grad():
            self.gate.weight.mul_(3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.gate(x))


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
