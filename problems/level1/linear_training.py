"""nn.Linear with bias, 1024 x 8192 fp32 input -> 8192 features, trained: forward and backward.

out = x @ W^T + b. The backward is two more matrix products of the same size, grad_x = g @ W and
grad_W = g^T @ x, and grad_b = the column sums of g. x is drawn at a fifth of the unit scale, so the gradient of W,
a sum over the 1024 rows, stays moderate. Judged: the output and the gradients of x, linear.weight and linear.bias,
for an upstream gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn

TOKENS = 1024
IN_FEATURES = 8192
OUT_FEATURES = 8192

TAGS = ["matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "few_tokens", "set": {"TOKENS": 8}, "public": True, "about": "a batch of a few rows"},
    {"name": "unaligned", "set": {"TOKENS": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"TOKENS": 2049, "IN_FEATURES": 257, "OUT_FEATURES": 129},
     "about": "many rows with few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Linear(in_features, out_features) with bias (PyTorch's default random init)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    return [torch.randn(TOKENS, IN_FEATURES) * 0.2]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
