"""Capsule layer: Linear (8192 x 4096 -> 256 capsules x 16) + squash nonlinearity on each 16-dim capsule vector, fp32.

s = (x @ W^T + b).view(B, 256, 16); out = (|s|^2 / (1 + |s|^2)) * s / sqrt(|s|^2 + 1e-8).
"""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
NUM_CAPSULES = 256
CAPSULE_DIM = 16

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "NUM_CAPSULES": 77, "CAPSULE_DIM": 13},
     "about": "a row count, feature size, capsule count and capsule size that are not powers of two"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "NUM_CAPSULES": (8, 200),
                              "CAPSULE_DIM": (2, 40)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Projects into capsule vectors and squashes each to a length in [0, 1)."""

    def __init__(self, in_features: int, num_capsules: int, capsule_dim: int):
        super().__init__()
        self.num_capsules = num_capsules
        self.capsule_dim = capsule_dim
        self.fc = nn.Linear(in_features, num_capsules * capsule_dim)
        with torch.no_grad():  # capsule lengths around 1, where squash is far from linear
            self.fc.weight.mul_(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.fc(x).view(x.shape[0], self.num_capsules, self.capsule_dim)
        sq = (s * s).sum(dim=-1, keepdim=True)
        return (sq / (1.0 + sq)) * s / torch.sqrt(sq + 1e-8)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, NUM_CAPSULES, CAPSULE_DIM]
