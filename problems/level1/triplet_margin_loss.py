"""Per-sample triplet margin loss (L2 distance, margin 1) of three (262144, 1024) fp32 embedding tensors.

out[i] = max(||a_i - p_i + eps|| - ||a_i - n_i + eps|| + margin, 0), eps = 1e-6 (F.pairwise_distance).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 262144
FEATURES = 1024
MARGIN = 1.0

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"BATCH": 64, "FEATURES": 20011}, "public": True,
     "about": "a few long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 4099, "FEATURES": 999},
     "about": "a batch and a feature count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (64, 2000), "FEATURES": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """F.triplet_margin_loss with p=2 and reduction='none' (one value per triplet)."""

    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=2, reduction="none")


def get_inputs():
    return [torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [MARGIN]
