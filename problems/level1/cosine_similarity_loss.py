"""Per-sample cosine loss 1 - cos(a_i, b_i) over the last dim of two (196608, 2048) fp32 tensors."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 196608
FEATURES = 2048

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"BATCH": 1000, "FEATURES": 3001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 16, "FEATURES": 65537}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"BATCH": (33, 2000), "FEATURES": (100, 4000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i] = 1 - <a_i / max(||a_i||, eps), b_i / max(||b_i||, eps)> (F.cosine_similarity, eps 1e-8)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return 1 - F.cosine_similarity(a, b, dim=-1)


def get_inputs():
    a = torch.randn(BATCH, FEATURES)
    b = torch.randn(BATCH, FEATURES).add_(a)  # correlated with a (cos ~ 0.71), in place: no extra temporary
    return [a, b]


def get_init_inputs():
    return []
