"""Per-sample smooth L1 (Huber-like, beta=0.5) loss between two (131072, 4096) fp32 tensors, averaged per row.

With d = |pred - target|: loss = 0.5 * d^2 / beta if d < beta else d - 0.5 * beta; out[i] = mean_j loss[i, j].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 131072
FEATURES = 4096
BETA = 0.5

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"BATCH": 64, "FEATURES": 20011}, "public": True,
     "about": "a few long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 4099, "FEATURES": 999},
     "about": "a batch and a feature count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (64, 2000), "FEATURES": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """F.smooth_l1_loss with reduction='none' and a non-default beta, averaged over the feature dim."""

    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(pred, target, reduction="none", beta=self.beta).mean(dim=1)


def get_inputs():
    return [torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [BETA]
