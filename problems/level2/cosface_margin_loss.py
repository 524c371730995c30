"""CosFace loss per sample: matmul of 8192 features (dim 2048) with 8192 class weights, divide by both norms (cosine), subtract margin at the label, scale, cross-entropy, fp32.

cos = (x @ W^T) / (||x|| ||W_c||); logits = s * (cos - m * onehot(label)); out[i] = CE(logits[i], label[i]), s = 64, m = 0.35.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
EMBED_DIM = 2048
NUM_CLASSES = 8192
SCALE = 64.0
MARGIN = 0.35

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 999, "EMBED_DIM": 300, "NUM_CLASSES": 1001},
     "about": "a row count, embedding size and class count that are not multiples of 32"},
    {"name": "many_classes", "set": {"BATCH": 64, "EMBED_DIM": 257, "NUM_CLASSES": 12289},
     "about": "few rows and many classes, not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (5, 500), "EMBED_DIM": (64, 700), "NUM_CLASSES": (100, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Large-margin cosine classifier loss (face recognition head), one value per sample."""

    def __init__(self, embed_dim: int, num_classes: int, scale: float, margin: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_classes, embed_dim))
        self.scale = scale
        self.margin = margin

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        cos = torch.matmul(x, self.weight.t())
        cos = cos / (x.norm(dim=1, keepdim=True) * self.weight.norm(dim=1))
        margin = torch.zeros_like(cos).scatter_(1, labels.unsqueeze(1), self.margin)
        logits = self.scale * (cos - margin)
        return F.cross_entropy(logits, labels, reduction="none")


def get_inputs():
    return [torch.randn(BATCH, EMBED_DIM), torch.randint(0, NUM_CLASSES, (BATCH,))]


def get_init_inputs():
    return [EMBED_DIM, NUM_CLASSES, SCALE, MARGIN]
