"""Multi-label classifier: Linear (8192 x 4096 -> 4096 classes) + sigmoid focal loss (alpha 0.25, gamma 2) summed per sample, fp32.

p = sigmoid(z), ce = bce_with_logits(z, t), p_t = p t + (1-p)(1-t); loss = alpha_t (1 - p_t)^gamma ce; out[i] = sum_c loss[i, c].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 4096
NUM_CLASSES = 4096
ALPHA = 0.25
GAMMA = 2.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "NUM_CLASSES": 1001},
     "about": "a row count, feature size and class count that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (2, 700), "IN_FEATURES": (64, 1500), "NUM_CLASSES": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Logits from a Linear layer, torchvision-style sigmoid focal loss, one value per sample."""

    def __init__(self, in_features: int, num_classes: int, alpha: float, gamma: float):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)
        with torch.no_grad():
            self.fc.weight.mul_(3.0)
            self.fc.bias.fill_(-2.0)  # rare positives: start with low probabilities
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = self.fc(x)
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce * (1 - p_t) ** self.gamma
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (alpha_t * loss).sum(dim=-1)


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    targets = (torch.rand(BATCH, NUM_CLASSES) < 0.05).float()
    return [x, targets]


def get_init_inputs():
    return [IN_FEATURES, NUM_CLASSES, ALPHA, GAMMA]
