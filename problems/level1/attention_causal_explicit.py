"""Causal attention written out (q @ k^T, scale, causal mask, softmax, @ v), fp32 q, k, v of shape (8, 16, 2048, 64).

out[b, h, i] = sum over j <= i of softmax_j(q_i . k_j / sqrt(64)) v_j. The eager reference materialises the
(8, 16, 2048, 2048) score matrix; a fused kernel need not.
"""
import math

import torch
import torch.nn as nn

BATCH = 8
HEADS = 16
SEQ = 2048
HEAD_DIM = 64

TAGS = ["attention", "compute-bound"]
# minimal work: q.k and p.v only for the S(S+1)/2 unmasked (i, j) pairs, 2 * HEAD_DIM FLOPs each
# (the FLOP counter would count the full S x S matmuls of the eager reference, twice this)
FLOPS = 2 * 2 * BATCH * HEADS * HEAD_DIM * SEQ * (SEQ + 1) // 2
WORKLOADS = [
    {"name": "one_head", "set": {"BATCH": 1, "HEADS": 1}, "public": True, "about": "a single batch and head"},
    {"name": "unaligned_seq", "set": {"BATCH": 2, "HEADS": 3, "SEQ": 1000},
     "about": "a sequence length that is not a multiple of 32"},
    {"name": "wide_heads", "set": {"BATCH": 1, "HEADS": 4, "SEQ": 777, "HEAD_DIM": 128},
     "about": "a larger head dim, with a sequence length that is not a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "HEADS": (1, 4), "SEQ": (100, 1200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Attention with a lower-triangular (causal) mask: query i attends to keys 0..i."""

    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [HEAD_DIM]
