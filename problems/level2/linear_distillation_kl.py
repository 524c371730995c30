"""Knowledge distillation: student Linear (4096 x 4096 -> 8192 classes) + temperature-softened KL to given teacher logits, per sample, fp32.

out[i] = T^2 * sum_c softmax(t_i / T)_c * (log_softmax(t_i / T)_c - log_softmax(s_i / T)_c), s = x @ W^T + b, T = 2.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
IN_FEATURES = 4096
NUM_CLASSES = 8192
TEMPERATURE = 2.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 257, "IN_FEATURES": 1000, "NUM_CLASSES": 3001},
     "about": "a row count, feature size and class count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (2, 400), "IN_FEATURES": (64, 1000), "NUM_CLASSES": (100, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Student logits from a Linear layer; Hinton distillation loss (KL(teacher || student)) per sample."""

    def __init__(self, in_features: int, num_classes: int, temperature: float):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)
        with torch.no_grad():
            self.fc.weight.mul_(3.0)
        self.temperature = temperature

    def forward(self, x: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
        t = self.temperature
        student = F.log_softmax(self.fc(x) / t, dim=-1)
        teacher = F.log_softmax(teacher_logits / t, dim=-1)
        kl = F.kl_div(student, teacher, reduction="none", log_target=True).sum(dim=-1)
        return kl * t * t


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), 2.0 * torch.randn(BATCH, NUM_CLASSES)]


def get_init_inputs():
    return [IN_FEATURES, NUM_CLASSES, TEMPERATURE]
