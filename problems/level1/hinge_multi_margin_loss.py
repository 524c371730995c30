"""Per-sample multi-class hinge loss (F.multi_margin_loss, margin 1) of (65536, 16384) fp32 scores and int64 labels.

out[i] = sum over j != y_i of max(0, margin - x[i, y_i] + x[i, j]) / C, with y = labels.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 65536
CLASSES = 16384
MARGIN = 1.0

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 64}, "public": True, "about": "only a few samples"},
    {"name": "unaligned", "set": {"BATCH": 1000, "CLASSES": 4099},
     "about": "a sample count and a class count that are not multiples of 32"},
    {"name": "few_classes", "set": {"BATCH": 5000, "CLASSES": 10}, "about": "many samples over very few classes"},
    {"name": "many_classes", "set": {"BATCH": 16, "CLASSES": 100003}, "about": "a few samples over very many classes"},
    {"name": "drawn", "set": {"BATCH": (33, 1500), "CLASSES": (10, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Multi-class margin (hinge) loss, p=1, one value per sample."""

    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.multi_margin_loss(scores, labels, p=1, margin=self.margin, reduction="none")


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return [MARGIN]
