"""KV-cache decode step: one new token per sequence attends over 8192 cached keys/values plus itself (B=8, 32 heads of 128, D=4096).

q, k_new, v_new = x W_q, x W_k, x W_v for the new token x (B, 1, D); K = [k_cache; k_new], V = [v_cache; v_new]
(B, H, 8193, 128); out = concat_h(softmax(q_h K_h^T / sqrt(d)) V_h) W_o. Dominated by reading the cache.
"""
import math

import torch
import torch.nn as nn

BATCH = 8
CACHE_LEN = 8192
D_MODEL = 4096
HEADS = 32

TAGS = ["architecture", "attention", "memory-bound"]

ATOL = 1e-5  # each output averages ~8k cached values: |out| is ~1e-2, so the default atol would hide 1% errors
WORKLOADS = [
    {"name": "unaligned_cache", "set": {"BATCH": 2, "CACHE_LEN": 1000, "D_MODEL": 2048, "HEADS": 16},
     "about": "a cache length that is not a multiple of 128, a narrower model with fewer heads of the same size"},
    {"name": "small_heads", "set": {"BATCH": 3, "CACHE_LEN": 1500, "D_MODEL": 1024, "HEADS": 16},
     "about": "a narrower model with smaller heads and a ragged cache length"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CACHE_LEN": (100, 2500), "D_MODEL": 2048, "HEADS": 16},
     "about": "a narrower model; batch and cache length drawn at random"},
]


class Model(nn.Module):
    """Single-token incremental decoding attention with a (read-only) key/value cache."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)          # (B, H, 1, d)
        k = torch.cat([k_cache, self.k_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)], dim=2)
        v = torch.cat([v_cache, self.v_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)], dim=2)
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.o_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, t, d))


def get_inputs():
    head_dim = D_MODEL // HEADS
    x = torch.randn(BATCH, 1, D_MODEL)
    k_cache = torch.randn(BATCH, HEADS, CACHE_LEN, head_dim)
    v_cache = torch.randn(BATCH, HEADS, CACHE_LEN, head_dim)
    return [x, k_cache, v_cache]


def get_init_inputs():
    return [D_MODEL, HEADS]
