"""Linear (512 x 4096 -> 8192) + LayerNorm over the 8192 features + GELU, fp32, trained: forward and backward.

out = gelu(layer_norm(x @ W^T + b)) with a learned LayerNorm weight and bias. The linear's bias is drawn in (-4, 4),
so the features' offsets spread wider than x @ W^T (std ~0.6) and the norm divides fp32's rounding in the product by
a larger std; and the batch is kept to a few hundred rows: the gradients of the weights are sums over the rows, and
the rounding they gather must stay well under the 1e-4 tolerance. Judged: the output, the gradient of x and the
gradients of the linear's weight and bias and of the norm's weight and bias, for an upstream gradient drawn anew for
every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 512
IN_FEATURES = 4096
OUT_FEATURES = 8192

TAGS = ["fusion", "matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 499, "IN_FEATURES": 1000, "OUT_FEATURES": 1003},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "narrow", "set": {"BATCH": 509, "IN_FEATURES": 257, "OUT_FEATURES": 129},
     "about": "few input and output features, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 500), "IN_FEATURES": (64, 1500), "OUT_FEATURES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Linear (bias drawn in (-4, 4)), LayerNorm (affine, eps 1e-5) over the output features, then GELU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.fc.bias.uniform_(-4.0, 4.0)
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_features))
            self.norm.bias.copy_(0.2 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.fc(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
