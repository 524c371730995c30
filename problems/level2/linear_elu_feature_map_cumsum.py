"""Causal linear-attention normalizer: key projection (32 x 256 tokens, 4096 -> 4096) + elu(.) + 1 feature map + cumulative sum over tokens, fp32.

phi = elu(x @ W^T + b) + 1; out[b, t] = sum_{s <= t} phi[b, s], shape (32, 256, 4096).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
SEQ_LEN = 256
IN_FEATURES = 4096
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1}, "public": True, "about": "a batch of one sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 999, "IN_FEATURES": 500, "OUT_FEATURES": 1001},
     "about": "long sequences, and sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "SEQ_LEN": (1, 700), "IN_FEATURES": (64, 800),
                              "OUT_FEATURES": (64, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Positive feature map of projected keys, prefix-summed along the sequence."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.k_proj = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.k_proj.weight.mul_(2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        phi = F.elu(self.k_proj(x)) + 1.0
        return torch.cumsum(phi, dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
