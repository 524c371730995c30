"""Causal sliding-window (local) attention: each token sees itself and the 511 previous tokens (B=2, S=4096, D=1024, 16 heads).

scores[i, j] = q_h[i] . k_h[j] / sqrt(d) if i - WINDOW < j <= i, else -inf; out = concat_h(softmax(scores) v_h) W_o + b_o.
The reference builds the full S x S band mask; a good kernel only visits the band (FLOPS counts the band only).
"""
import math

import torch
import torch.nn as nn

BATCH = 2
SEQ = 4096
D_MODEL = 1024
HEADS = 16
WINDOW = 512

TAGS = ["architecture", "attention", "compute-bound"]

# Minimal work: the four D x D projections plus QK^T and PV over the band of WINDOW keys per query.
FLOPS = 4 * 2 * BATCH * SEQ * D_MODEL * D_MODEL + 2 * 2 * BATCH * SEQ * WINDOW * D_MODEL
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 777, "D_MODEL": 512, "HEADS": 8},
     "about": "a single sequence whose length is not a multiple of 32 or of the window, a narrower model"},
    {"name": "narrow_window", "set": {"BATCH": 1, "SEQ": 600, "WINDOW": 100, "D_MODEL": 768, "HEADS": 8},
     "about": "a short window that is not a multiple of 32, a narrower model with fewer, larger heads"},
    {"name": "drawn", "set": {"BATCH": 1, "SEQ": (300, 900), "WINDOW": (50, 250), "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model; sequence length and window drawn at random"},
]


class Model(nn.Module):
    """Mistral-style local causal attention with a fixed window."""

    def __init__(self, d_model: int, heads: int, window: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.window = window
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        nn.init.normal_(self.qkv.weight[: 2 * d_model], std=(1.5 / d_model) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        pos = torch.arange(s, device=x.device)
        offset = pos[:, None] - pos[None, :]                                # i - j
        outside = (offset < 0) | (offset >= self.window)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores.masked_fill(outside, float("-inf")), dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d)
        return self.out_proj(out)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, WINDOW]
