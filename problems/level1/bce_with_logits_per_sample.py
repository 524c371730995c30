"""Per-sample binary cross-entropy with logits of (131072, 4096) fp32 logits vs soft targets in [0, 1), averaged per row.

loss = max(x, 0) - x * t + log(1 + exp(-|x|)); out[i] = mean_j loss[i, j].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 131072
FEATURES = 4096

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "few_samples", "set": {"BATCH": 1024}, "public": True, "about": "fewer samples"},
    {"name": "unaligned", "set": {"BATCH": 1000, "FEATURES": 4099},
     "about": "a sample count and a feature count that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 8, "FEATURES": 65537}, "about": "a few samples with very many features"},
    {"name": "drawn", "set": {"BATCH": (33, 1500), "FEATURES": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """F.binary_cross_entropy_with_logits with reduction='none', averaged over the feature dim."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, targets, reduction="none").mean(dim=1)


def get_inputs():
    return [torch.randn(BATCH, FEATURES).mul_(2), torch.rand(BATCH, FEATURES)]  # in place: no extra temporary


def get_init_inputs():
    return []
