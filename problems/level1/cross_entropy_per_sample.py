"""Per-sample cross-entropy of (24576, 32768) fp32 logits against int64 class labels (reduction='none')."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 24576
CLASSES = 32768

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 64}, "public": True, "about": "only a few samples"},
    {"name": "unaligned", "set": {"BATCH": 1000, "CLASSES": 4099},
     "about": "a sample count and a class count that are not multiples of 32"},
    {"name": "few_classes", "set": {"BATCH": 8000, "CLASSES": 10}, "about": "many samples over very few classes"},
    {"name": "many_classes", "set": {"BATCH": 8, "CLASSES": 100003}, "about": "a few samples over very many classes"},
    {"name": "drawn", "set": {"BATCH": (33, 1500), "CLASSES": (100, 6000)}, "about": "sizes drawn at random"},
]


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
