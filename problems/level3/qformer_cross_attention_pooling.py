"""Q-Former: 32 learned queries pool 577 image-encoder features through 2 BERT-style layers (self-attn, cross-attn, FFN) (B=64, D=768).

Each layer (post-LN): q = LN(q + SelfAttn(q)); q = LN(q + CrossAttn(q, img)); q = LN(q + W_2 GELU(W_1 q)).
Image features have 1024 channels (ViT-L/14 at 336px: 24*24 + 1 tokens), projected to 768 by the cross-attention K/V.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
NUM_QUERIES = 32
IMAGE_TOKENS = 577
IMAGE_DIM = 1024
D_MODEL = 768
HEADS = 12
D_FF = 3072
LAYERS = 2

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "fewer_tokens", "set": {"BATCH": 1, "IMAGE_TOKENS": 257},
     "about": "a single image from an encoder with a different number of image tokens"},
    {"name": "other_queries", "set": {"BATCH": 2, "NUM_QUERIES": 20, "IMAGE_TOKENS": 200},
     "about": "a query count and an image token count that are not multiples of 32"},
]


class Attention(nn.Module):
    def __init__(self, d_model: int, kv_dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.kv_proj = nn.Linear(kv_dim, 2 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        m = context.shape[1]
        q = self.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        kv = self.kv_proj(context).view(b, m, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(torch.matmul(q, kv[0].transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(torch.matmul(attn, kv[1]).transpose(1, 2).reshape(b, n, d))


class QFormerLayer(nn.Module):
    def __init__(self, d_model: int, image_dim: int, heads: int, d_ff: int):
        super().__init__()
        self.self_attn = Attention(d_model, d_model, heads)
        self.ln_self = nn.LayerNorm(d_model, eps=1e-12)
        self.cross_attn = Attention(d_model, image_dim, heads)
        self.ln_cross = nn.LayerNorm(d_model, eps=1e-12)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.ln_ffn = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, q: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        q = self.ln_self(q + self.self_attn(q, q))
        q = self.ln_cross(q + self.cross_attn(q, image))
        return self.ln_ffn(q + self.fc2(F.gelu(self.fc1(q))))


class Model(nn.Module):
    """BLIP-2 style query transformer: learned query tokens summarize a frozen image encoder's features."""

    def __init__(self, num_queries: int, d_model: int, image_dim: int, heads: int, d_ff: int, layers: int):
        super().__init__()
        self.query_tokens = nn.Parameter(torch.randn(1, num_queries, d_model))
        self.layers = nn.ModuleList([QFormerLayer(d_model, image_dim, heads, d_ff) for _ in range(layers)])

    def forward(self, image_features: torch.Tensor) -> torch.Tensor:
        q = self.query_tokens.repeat(image_features.shape[0], 1, 1)  # a copy, not a view of the parameter
        for layer in self.layers:
            q = layer(q, image_features)
        return q


def get_inputs():
    return [torch.randn(BATCH, IMAGE_TOKENS, IMAGE_DIM)]


def get_init_inputs():
    return [NUM_QUERIES, D_MODEL, IMAGE_DIM, HEADS, D_FF, LAYERS]
