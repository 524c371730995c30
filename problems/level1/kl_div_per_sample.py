"""Per-sample KL divergence KL(q || p) between row softmaxes of two (98304, 4096) fp32 logit tensors.

log_p = log_softmax(input_logits), log_q = log_softmax(target_logits);
out[i] = sum_j exp(log_q[i, j]) * (log_q[i, j] - log_p[i, j])  (F.kl_div with log_target=True, summed per row).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 98304
CLASSES = 4096

TAGS = ["loss", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"BATCH": 1000, "CLASSES": 4099},
     "about": "a row count and a class count that are not multiples of 32"},
    {"name": "long_rows", "set": {"BATCH": 16, "CLASSES": 65537}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"BATCH": (33, 1500), "CLASSES": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Log-probabilities come from log_softmax inside forward; one KL value per row."""

    def __init__(self):
        super().__init__()

    def forward(self, input_logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
        log_p = F.log_softmax(input_logits, dim=-1)
        log_q = F.log_softmax(target_logits, dim=-1)
        return F.kl_div(log_p, log_q, reduction="none", log_target=True).sum(dim=-1)


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randn(BATCH, CLASSES)]


def get_init_inputs():
    return []
