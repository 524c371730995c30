"""Per-sample cross-entropy loss of (4096, 1000) logits against integer class labels, trained: forward and backward
(CPU-sized).

Judged: the per-sample losses and the gradient of the logits, for an upstream gradient (one value per sample) drawn
anew for every call. The labels are integers and get no gradient.
"""
import torch
import torch.nn as nn

BATCH = 4096
CLASSES = 1000

TAGS = ["loss", "memory-bound", "training"]
TRAINING = True
# the logits' gradient is upstream * (softmax - one_hot(label)), ~1/1000 away from the label: the default atol 1e-4
# would accept almost any value there
ATOL = 1e-6
WORKLOADS = [
    {"name": "many_classes", "set": {"BATCH": 77, "CLASSES": 4099},
     "about": "fewer rows with more classes, a count that is not a multiple of 32"},
    {"name": "few_classes", "set": {"BATCH": 999, "CLASSES": 10}, "about": "very few classes per row"},
    {"name": "drawn", "set": {"BATCH": (16, 300), "CLASSES": (2, 3000)}, "about": "sizes drawn at random"},
]


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
