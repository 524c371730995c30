"""Per-sample mean squared error between two (131072, 4096) fp32 tensors: out[i] = mean_j (pred - target)^2."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 131072
FEATURES = 4096

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"BATCH": 64, "FEATURES": 20011}, "public": True,
     "about": "a few long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 4099, "FEATURES": 999},
     "about": "a batch and a feature count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (64, 2000), "FEATURES": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """F.mse_loss with reduction='none', averaged over the feature dim (one loss per sample)."""

    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(pred, target, reduction="none").mean(dim=1)


def get_inputs():
    return [torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return []
