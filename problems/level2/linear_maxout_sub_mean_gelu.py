"""Linear (4096 x 4096 -> 8192) + maxout over groups of 4 features + subtract the row mean + GELU, fp32.

y = x @ W^T + b; m[i, j] = max_k y[i, 4j + k]; out = gelu(m - mean_j m), shape (4096, 2048).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 8192
POOL = 4

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 3003, "POOL": 3},
     "about": "a row count and feature sizes that are not multiples of 32, and another pool size"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": 2000},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Maxout unit (max over consecutive groups of `pool` features), centred per row, then GELU."""

    def __init__(self, in_features: int, out_features: int, pool: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        m = y.view(y.shape[0], -1, self.pool).amax(dim=-1)
        m = m - m.mean(dim=-1, keepdim=True)
        return F.gelu(m)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, POOL]
