"""Multi-query attention: 16 query heads share one key/value head, bidirectional (B=8, S=2048, D=1024, head dim 64).

q = x W_q split into H heads; k = x W_k and v = x W_v are single heads of size d = D / H shared by all query heads;
out = concat_h(softmax(q_h k^T / sqrt(d)) v) W_o + b_o.
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
    """MQA self-attention (one shared K/V head, broadcast over the query heads)."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.kv_proj = nn.Linear(d_model, 2 * self.head_dim)
        self.out_proj = nn.Linear(d_model, d_model)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        nn.init.normal_(self.q_proj.weight, std=(1.5 / d_model) ** 0.5)
        nn.init.normal_(self.kv_proj.weight[: self.head_dim], std=(1.5 / d_model) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)  # (B, H, S, d)
        k, v = self.kv_proj(x).unsqueeze(1).split(self.head_dim, dim=-1)          # (B, 1, S, d) each
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d)
        return self.out_proj(out)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS]
