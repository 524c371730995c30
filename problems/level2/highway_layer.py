"""Highway layer: two Linears (4096 x 4096 -> 4096) for transform h = relu(.) and gate t = sigmoid(.), out = t*h + (1-t)*x, fp32.

The gate bias starts negative (-1) so the layer leans towards carrying x, as in the original paper.
"""
import torch
import torch.nn as nn

BATCH = 4096
FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "FEATURES": 1001},
     "about": "a row count and feature size that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 8191, "FEATURES": 129}, "about": "many rows of few features"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "FEATURES": (64, 1500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = sigmoid(T(x)) * relu(H(x)) + (1 - sigmoid(T(x))) * x."""

    def __init__(self, features: int):
        super().__init__()
        self.transform = nn.Linear(features, features)
        self.gate = nn.Linear(features, features)
        with torch.no_grad():
            self.transform.weight.mul_(2.0)
            self.gate.weight.mul_(2.0)
            self.gate.bias.fill_(-1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.transform(x))
        t = torch.sigmoid(self.gate(x))
        return t * h + (1.0 - t) * x


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
