"""CLIP loss per pair: L2-normalize 8192 image and text embeddings (dim 2048), scaled similarity matmul, symmetric cross-entropy, fp32.

logits = exp(t) * norm(img) @ norm(txt)^T (8192 x 8192); out[i] = (CE(logits[i], i) + CE(logits[:, i], i)) / 2.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
EMBED_DIM = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "small_batch", "set": {"BATCH": 45, "EMBED_DIM": 4099}, "public": True,
     "about": "a small batch of long embeddings, neither a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 2001, "EMBED_DIM": 257},
     "about": "a large batch of short embeddings, neither a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (50, 1500), "EMBED_DIM": (64, 1500)},
     "about": "batch and embedding sizes drawn at random"},
]


class Model(nn.Module):
    """Contrastive image-text loss, one value per pair (no mean over the batch)."""

    def __init__(self):
        super().__init__()
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, image_embeds: torch.Tensor, text_embeds: torch.Tensor) -> torch.Tensor:
        image_embeds = image_embeds / image_embeds.norm(dim=-1, keepdim=True)
        text_embeds = text_embeds / text_embeds.norm(dim=-1, keepdim=True)
        logits = self.logit_scale.exp() * torch.matmul(image_embeds, text_embeds.t())
        labels = torch.arange(logits.shape[0], device=logits.device)
        loss_i = F.cross_entropy(logits, labels, reduction="none")
        loss_t = F.cross_entropy(logits.t(), labels, reduction="none")
        return (loss_i + loss_t) / 2


def get_inputs():
    image = torch.randn(BATCH, EMBED_DIM)
    text = image + torch.randn(BATCH, EMBED_DIM)  # matched pairs are correlated
    return [image, text]


def get_init_inputs():
    return []
