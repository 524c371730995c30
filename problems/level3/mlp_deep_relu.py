"""Deep MLP: 8 x (Linear 4096->4096 + ReLU) then a Linear 4096->1024 head, on a (2048, 4096) fp32 batch.

h_0 = x; h_{i+1} = relu(h_i @ W_i^T + b_i) for i < 8; out = h_8 @ W_head^T + b_head.
Hidden weights use Kaiming-normal init (ReLU gain), so activations keep unit scale through the stack.
"""
import torch
import torch.nn as nn

BATCH = 2048
IN_FEATURES = 4096
HIDDEN = 4096
DEPTH = 8
OUT_FEATURES = 1024

TAGS = ["architecture", "mlp", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1, "DEPTH": 3}, "about": "a batch of one row through a shallower stack"},
    {"name": "unaligned", "set": {"BATCH": 100, "IN_FEATURES": 1000, "HIDDEN": 1500, "OUT_FEATURES": 250},
     "about": "a batch and layer widths that are not multiples of 128"},
    {"name": "drawn", "set": {"BATCH": (1, 100), "HIDDEN": 2048, "DEPTH": 4},
     "about": "a shallower, narrower stack on a batch drawn at random"},
]


class Model(nn.Module):
    """DEPTH Linear+ReLU layers followed by a linear head."""

    def __init__(self, in_features: int, hidden: int, depth: int, out_features: int):
        super().__init__()
        layers = []
        width = in_features
        for _ in range(depth):
            linear = nn.Linear(width, hidden)
            nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
            layers += [linear, nn.ReLU()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, DEPTH, OUT_FEATURES]
