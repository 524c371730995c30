"""ViT patch embedding: patchify 768 images (3 x 224 x 224) into 16 x 16 patches, Linear 768 -> 1024, add position embedding, LayerNorm, fp32.

patches (B, 196, 768) = reshape/permute of the image; out = layer_norm(patches @ W^T + b + pos), shape (768, 196, 1024).
"""
import torch
import torch.nn as nn

BATCH = 768
CHANNELS = 3
IMAGE = 224
PATCH = 16
EMBED_DIM = 1024

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 3, "IMAGE": 77, "PATCH": 7, "EMBED_DIM": 1000},
     "about": "an image and patch size and an embedding size that are not powers of two"},
    {"name": "drawn", "set": {"BATCH": (1, 16), "CHANNELS": (1, 4), "IMAGE": 96, "EMBED_DIM": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Patchify, linear patch projection, learned position embedding, LayerNorm."""

    def __init__(self, channels: int, image: int, patch: int, embed_dim: int):
        super().__init__()
        self.patch = patch
        num_patches = (image // patch) ** 2
        self.proj = nn.Linear(channels * patch * patch, embed_dim)
        self.pos_embed = nn.Parameter(0.5 * torch.randn(1, num_patches, embed_dim))
        self.norm = nn.LayerNorm(embed_dim)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(embed_dim))
            self.norm.bias.copy_(0.2 * torch.randn(embed_dim))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        b, c, h, w = images.shape
        p = self.patch
        patches = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, (h // p) * (w // p), c * p * p)
        return self.norm(self.proj(patches) + self.pos_embed)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [CHANNELS, IMAGE, PATCH, EMBED_DIM]
