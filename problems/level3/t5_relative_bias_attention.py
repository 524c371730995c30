"""T5 self-attention with a learned bucketed relative position bias, no score scaling (B=8, S=2048, D=1024, 16 heads).

scores_h[i, j] = q_h[i] . k_h[j] + E[bucket(j - i), h], with T5's bidirectional log-spaced buckets (32 buckets,
max distance 128; the (S, S) bucket index is a buffer built in __init__); out = concat_h(softmax(scores_h) v_h) W_o.
Projections have no bias, as in T5.
"""
import math

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
D_MODEL = 1024
HEADS = 16
NUM_BUCKETS = 32
MAX_DISTANCE = 128

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 450},
     "about": "a single sequence whose length is not a multiple of 32"},
    {"name": "other_heads", "set": {"BATCH": 2, "SEQ": 333, "D_MODEL": 768, "HEADS": 8},
     "about": "a narrower model with fewer, larger heads (head size not a power of two) and a ragged length"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "SEQ": (100, 600), "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model; batch and sequence length drawn at random"},
]


def relative_position_bucket(relative_position: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    num_buckets //= 2
    buckets = (relative_position > 0).long() * num_buckets
    n = relative_position.abs()
    max_exact = num_buckets // 2
    large = max_exact + (torch.log(n.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = large.clamp(max=num_buckets - 1)
    return buckets + torch.where(n < max_exact, n, large)


class Model(nn.Module):
    """T5 encoder self-attention layer with its relative attention bias."""

    def __init__(self, d_model: int, heads: int, seq: int, num_buckets: int, max_distance: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)
        self.relative_attention_bias = nn.Embedding(num_buckets, heads)
        pos = torch.arange(seq)
        self.register_buffer("buckets", relative_position_bucket(pos[None, :] - pos[:, None], num_buckets, max_distance))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        bias = self.relative_attention_bias(self.buckets[:s, :s]).permute(2, 0, 1)   # (H, S, S)
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) + bias, dim=-1)
        return self.o(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, SEQ, NUM_BUCKETS, MAX_DISTANCE]
