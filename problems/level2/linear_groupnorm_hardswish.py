"""Linear (8192 x 2048 -> 8192) + GroupNorm (32 groups over the 8192 features) + HardSwish, fp32.

out = hardswish(group_norm(x @ W^T + b)) with a learned per-channel GroupNorm affine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 2048
OUT_FEATURES = 8192
NUM_GROUPS = 32

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "OUT_FEATURES": 1001, "NUM_GROUPS": 7},
     "about": "a row count, feature sizes and a group size that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "OUT_FEATURES": 960},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Linear, GroupNorm on the (batch, channels) output, HardSwish."""

    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, out_features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.3 * torch.randn(out_features))
            self.norm.bias.copy_(0.3 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(self.norm(self.fc(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, NUM_GROUPS]
