"""ViT encoder: 16x16 patch embedding of 224x224 images, class token, learned positions, 2 pre-LN layers, final LN (B=64, D=768, 12 heads).

tokens = [cls; patchify(img) W_patch^T + b] + pos_embed (197 tokens), then 2 x (x + MHA(LN(x)); x + MLP_GELU(LN(x))), LN.
The patch embedding is a stride-16, 16x16 convolution; the reference computes it as patchify + matmul with the
conv weight (the same math, without cuDNN's TF32 convolution path).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IMG = 224
PATCH = 16
CHANNELS = 3
D_MODEL = 768
HEADS = 12
LAYERS = 2
D_FF = 3072

TAGS = ["architecture", "transformer", "compute-bound"]
WORKLOADS = [
    {"name": "small_image", "set": {"BATCH": 1, "IMG": 160},
     "about": "a single smaller image (a token count that is not a power of two)"},
    {"name": "other_patch", "set": {"BATCH": 3, "IMG": 112, "PATCH": 14, "D_MODEL": 384, "HEADS": 6, "D_FF": 1536},
     "about": "a different patch size and a narrower model"},
]


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.ln1 = nn.LayerNorm(d_model, eps=1e-6)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-6)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        x = x + self.proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    """ViT-B/16-shaped encoder with 2 layers; returns the normalized token sequence (class token first)."""

    def __init__(self, img: int, patch: int, channels: int, d_model: int, heads: int, layers: int, d_ff: int):
        super().__init__()
        self.patch = patch
        num_patches = (img // patch) ** 2
        self.patch_embed = nn.Conv2d(channels, d_model, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, num_patches + 1, d_model))
        self.layers = nn.ModuleList([EncoderLayer(d_model, heads, d_ff) for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        b, c, h, w = images.shape
        p = self.patch
        patches = (images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
                   .reshape(b, (h // p) * (w // p), c * p * p))
        x = F.linear(patches, self.patch_embed.weight.flatten(1), self.patch_embed.bias)  # == stride-p conv
        x = torch.cat([self.cls_token.expand(b, -1, -1), x], dim=1) + self.pos_embed
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, IMG, IMG)]


def get_init_inputs():
    return [IMG, PATCH, CHANNELS, D_MODEL, HEADS, LAYERS, D_FF]
