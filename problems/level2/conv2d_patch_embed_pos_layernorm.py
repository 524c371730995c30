"""ViT-L/16 patch embedding: Conv2d 16x16/s16 (3->1024, 224x224 images) + flatten to tokens + position embedding + LayerNorm, fp32.

t = conv2d(x, W, b, stride=16).flatten(2).transpose(1, 2)  -> (1024, 196, 1024);  y = layernorm(t + pos).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1024
IN_CHANNELS = 3
IMAGE = 224
PATCH = 16
EMBED = 1024

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "IMAGE": 400}, "public": True,
     "about": "a batch of one larger image (a token count that is not a multiple of 32)"},
    {"name": "odd_patch", "set": {"BATCH": 4, "IMAGE": 200, "PATCH": 14, "EMBED": 1000},
     "about": "another patch size, a token count and an embedding width that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 5), "IMAGE": (16, 250), "EMBED": (64, 1100)},
     "about": "batch, image size and embedding width drawn at random"},
]


class Model(nn.Module):
    """Non-overlapping patch conv, tokens as (N, L, D), learned position embedding, LayerNorm over D."""

    def __init__(self, in_channels: int, image: int, patch: int, embed: int):
        super().__init__()
        self.proj = nn.Conv2d(in_channels, embed, patch, stride=patch)
        self.pos = nn.Parameter(0.02 * torch.randn(1, (image // patch) ** 2, embed))
        self.norm = nn.LayerNorm(embed)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(embed))
            self.norm.bias.copy_(0.2 * torch.randn(embed))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.proj(x).flatten(2).transpose(1, 2)
        return self.norm(t + self.pos)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, IMAGE, PATCH, EMBED]
