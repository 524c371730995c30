"""Per-sample cross-entropy of (6144, 32768) fp32 logits against int64 class labels (reduction='none'), trained:
forward and backward.

out[i] = logsumexp_j logits[i, j] - logits[i, labels[i]]. Judged: the losses and the gradient of the logits,
grad_logits[i, j] = (softmax(logits[i])[j] - (j == labels[i])) * grad_out[i], for an upstream gradient drawn anew
for every call (the labels are integers: no gradient).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 6144
CLASSES = 32768

TAGS = ["loss", "memory-bound", "training"]
TRAINING = True

# the logits' gradients are ~1 / CLASSES (3e-5 here); the default atol (1e-4) would accept almost any gradient
ATOL = 1e-8
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
