"""Highway layer: two Linears (4096 x 4096 -> 4096) for transform h = relu(.) and gate t = sigmoid(.), out = t*h + (1-t)*x, fp32.

The gate bias starts negative (-1) so the layer leans towards carrying x, as in the original paper.
"""
import torch
import torch.nn as nn

BATCH = 4096
FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]


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
