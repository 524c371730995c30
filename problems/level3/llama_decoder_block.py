"""LLaMA decoder block: RMSNorm, RoPE, causal grouped-query attention (16 q / 4 kv heads), SwiGLU MLP (B=2, S=2048, D=2048, FFN 5632).

h = x + W_o attn(RoPE(q), RoPE(k), v) with q, k, v from RMSNorm1(x), positions 0..S-1, K/V heads shared by 4 query heads;
out = h + W_down(SiLU(W_gate n) * (W_up n)) with n = RMSNorm2(h). RMSNorm(x) = x / sqrt(mean(x^2) + eps) * w.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ = 2048
D_MODEL = 2048
HEADS = 16
KV_HEADS = 4
D_FF = 5632
ROPE_BASE = 10000.0
EPS = 1e-6

TAGS = ["architecture", "transformer", "compute-bound"]
WORKLOADS = [
    {"name": "small_unaligned", "set": {"BATCH": 1, "SEQ": 600, "D_MODEL": 512, "HEADS": 8, "KV_HEADS": 2,
                                        "D_FF": 1400},
     "about": "a smaller model on one sequence; sequence length and MLP width not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": 1, "SEQ": (100, 350), "D_MODEL": 768, "HEADS": 12, "KV_HEADS": 4, "D_FF": 2048},
     "about": "a different query/key-value head ratio, sequence length drawn at random"},
]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


class Model(nn.Module):
    """One LLaMA-2 style block; rotary angles are computed in forward from the positions 0..S-1."""

    def __init__(self, d_model: int, heads: int, kv_heads: int, d_ff: int, base: float, eps: float):
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads
        self.head_dim = d_model // heads
        self.attn_norm = RMSNorm(d_model, eps)
        self.q_proj = nn.Linear(d_model, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, d_model, bias=False)
        self.mlp_norm = RMSNorm(d_model, eps)
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)
        inv_freq = 1.0 / (base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        pos = torch.arange(s, device=x.device, dtype=x.dtype)
        angles = pos[:, None] * self.inv_freq
        angles = torch.cat([angles, angles], dim=-1)
        cos, sin = angles.cos(), angles.sin()
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.o_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attn_norm(x))
        n = self.mlp_norm(h)
        return h + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, KV_HEADS, D_FF, ROPE_BASE, EPS]
