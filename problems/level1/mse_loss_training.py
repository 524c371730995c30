"""Per-sample mean squared error between two (393216, 256) fp32 tensors, trained: forward and backward.

out[i] = mean over j of (pred[i, j] - target[i, j])^2, one loss per sample (no reduction over the batch). The
backward: grad_pred[i, j] = 2 * g[i] * (pred[i, j] - target[i, j]) / 256 and grad_target = -grad_pred. Both inputs
are floating, so both get gradients. Judged: the output and the gradients of pred and target, for an upstream
gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 393216
FEATURES = 256

TAGS = ["loss", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "short_rows", "set": {"BATCH": 1000, "FEATURES": 100}, "public": True,
     "about": "fewer samples with fewer features, not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 4099, "FEATURES": 257},
     "about": "a batch and a feature count that are not multiples of 32"},
    {"name": "wide_rows", "set": {"BATCH": 65, "FEATURES": 515},
     "about": "a few wider rows whose length is not a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (64, 3000), "FEATURES": (16, 500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """F.mse_loss with reduction='none', averaged over the feature dim (one loss per sample)."""

    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(pred, target, reduction="none").mean(dim=-1)


def get_inputs():
    return [torch.randn(BATCH, FEATURES), torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return []
