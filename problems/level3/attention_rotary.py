"""Causal multi-head attention with rotary position embeddings computed in forward from integer positions (B=8, S=2048, D=1024, 16 heads).

angle[b, s, i] = positions[b, s] * inv_freq[i], inv_freq[i] = 10000^(-2i/d) (a buffer);
q and k are rotated (rotate-half convention): x * cos + rotate_half(x) * sin, then causal softmax attention and W_o.
positions are a per-sequence offset plus 0..S-1 (as when decoding continues a longer context).
"""
import math

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
D_MODEL = 1024
HEADS = 16
MAX_OFFSET = 2048
ROPE_BASE = 10000.0

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 450},
     "about": "a single sequence whose length is not a multiple of 32"},
    {"name": "other_heads", "set": {"BATCH": 2, "SEQ": 333, "D_MODEL": 768, "HEADS": 8},
     "about": "a narrower model with fewer, larger heads (head size not a power of two) and a ragged length"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "SEQ": (100, 600), "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model; batch and sequence length drawn at random"},
]


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Model(nn.Module):
    """RoPE self-attention (GPT-NeoX / LLaMA rotate-half form), causal mask, bias-free projections."""

    def __init__(self, d_model: int, heads: int, base: float):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        nn.init.normal_(self.qkv.weight[: 2 * d_model], std=(1.5 / d_model) ** 0.5)
        inv_freq = 1.0 / (base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        angles = positions.to(x.dtype)[:, :, None] * self.inv_freq          # (B, S, d/2)
        angles = torch.cat([angles, angles], dim=-1).unsqueeze(1)           # (B, 1, S, d)
        cos, sin = angles.cos(), angles.sin()
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d)
        return self.o_proj(out)


def get_inputs():
    x = torch.randn(BATCH, SEQ, D_MODEL)
    positions = torch.arange(SEQ).unsqueeze(0) + torch.randint(0, MAX_OFFSET, (BATCH, 1))
    return [x, positions]


def get_init_inputs():
    return [D_MODEL, HEADS, ROPE_BASE]
