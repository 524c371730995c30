"""Per-sample cross-entropy of (24576, 32768) fp32 logits against int64 class labels (reduction='none')."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 24576
CLASSES = 32768

TAGS = ["loss", "memory-bound"]


class Model(nn.Module):
    """out[i] = logsumexp_j logits[i, j] - logits[i, labels[i]]."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, labels, reduction="none")


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
