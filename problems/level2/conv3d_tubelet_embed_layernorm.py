"""Video tubelet embedding: Conv3d 2x16x16/s(2,16,16) (3->768, 16x224x224 clips) + flatten to 1568 tokens + LayerNorm, fp32.

ViViT/VideoMAE style: t = conv3d(x, W, b).flatten(2).transpose(1, 2) -> (64, 1568, 768);  y = layernorm(t).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 3
FRAMES = 16
IMAGE = 224
TUBELET = 2
PATCH = 16
EMBED = 768

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "FRAMES": 7, "IMAGE": 200}, "public": True,
     "about": "a batch of one shorter, smaller clip (sizes that are not multiples of the tubelet and patch)"},
    {"name": "odd_patch", "set": {"BATCH": 2, "FRAMES": 4, "IMAGE": 112, "PATCH": 14, "EMBED": 1000},
     "about": "another patch size and an embedding width that is not a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "FRAMES": (2, 8), "IMAGE": (16, 130), "EMBED": (64, 800)},
     "about": "batch, clip size and embedding width drawn at random"},
]


class Model(nn.Module):
    """Non-overlapping spatio-temporal patch conv, tokens as (N, L, D), LayerNorm over D."""

    def __init__(self, in_channels: int, tubelet: int, patch: int, embed: int):
        super().__init__()
        self.proj = nn.Conv3d(in_channels, embed, (tubelet, patch, patch), stride=(tubelet, patch, patch))
        self.norm = nn.LayerNorm(embed)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(embed))
            self.norm.bias.copy_(0.2 * torch.randn(embed))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.proj(x).flatten(2).transpose(1, 2))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, FRAMES, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, TUBELET, PATCH, EMBED]
