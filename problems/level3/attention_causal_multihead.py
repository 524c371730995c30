"""Causal multi-head self-attention written out with an explicit upper-triangular mask (B=8, S=2048, D=1024, 16 heads).

scores = q_h k_h^T / sqrt(d); scores[i, j] = -inf for j > i; out = concat_h(softmax(scores) v_h) W_o + b_o.
The QKV projection is one fused Linear(D, 3D).
"""
import math

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
D_MODEL = 1024
HEADS = 16

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 450},
     "about": "a single sequence whose length is not a multiple of 32"},
    {"name": "other_heads", "set": {"BATCH": 2, "SEQ": 333, "D_MODEL": 768, "HEADS": 8},
     "about": "a narrower model with fewer, larger heads (head size not a power of two) and a ragged length"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "SEQ": (100, 600), "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model; batch and sequence length drawn at random"},
]


class Model(nn.Module):
    """Decoder-style masked self-attention: each position attends to itself and earlier positions."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        nn.init.normal_(self.qkv.weight[: 2 * d_model], std=(1.5 / d_model) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d)
        return self.out_proj(out)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS]
