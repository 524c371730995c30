"""Grouped-query attention, 32 query heads sharing 8 key/value heads, causal (B=4, S=2048, D=2048, head dim 64).

q has H = 32 heads, k and v have G = 8 heads; query head h uses key/value head h // (H / G).
out = concat_h(softmax(mask(q_h k_{h//4}^T / sqrt(d))) v_{h//4}) W_o. Projections have no bias (LLaMA-style).
"""
import math

import torch
import torch.nn as nn

BATCH = 4
SEQ = 2048
D_MODEL = 2048
HEADS = 32
KV_HEADS = 8

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 600, "D_MODEL": 1024, "HEADS": 16, "KV_HEADS": 4},
     "about": "a single sequence whose length is not a multiple of 32, in a narrower model"},
    {"name": "other_groups", "set": {"BATCH": 2, "SEQ": 333, "D_MODEL": 960, "HEADS": 12, "KV_HEADS": 6},
     "about": "a different ratio of query to key/value heads, a head size that is not a power of two"},
    {"name": "drawn", "set": {"BATCH": 1, "SEQ": (200, 600), "D_MODEL": 1024, "HEADS": 16, "KV_HEADS": 4},
     "about": "sequence length drawn at random"},
]


class Model(nn.Module):
    """GQA self-attention; the reference expands the 8 K/V heads to 32 with repeat_interleave."""

    def __init__(self, d_model: int, heads: int, kv_heads: int):
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, d_model, bias=False)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        for w in (self.q_proj.weight, self.k_proj.weight):
            nn.init.normal_(w, std=(1.5 / d_model) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.o_proj(out)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, KV_HEADS]
