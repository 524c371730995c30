"""Per-sample cross-entropy loss of (4096, 1000) logits against integer class labels (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4096
CLASSES = 1000

TAGS = ["loss", "memory-bound"]


class Model(nn.Module):
    """out[i] = logsumexp_j logits[i, j] - logits[i, target[i]] (reduction='none')."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits, target, reduction="none")


def get_inputs():
    return [torch.randn(BATCH, CLASSES) * 2, torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
