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
