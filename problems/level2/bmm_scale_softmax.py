"""Attention scores: bmm of (128, 2048, 64) queries with transposed keys, scale by 1/sqrt(64), softmax over keys, fp32.

out = softmax(q @ k^T / sqrt(d), dim=-1), shape (128, 2048, 2048) (batch x heads flattened).
"""
import math

import torch
import torch.nn as nn

BATCH_HEADS = 128
SEQ_LEN = 2048
HEAD_DIM = 64

TAGS = ["fusion", "matmul", "memory-bound"]
ATOL = 1e-6  # probabilities are ~1/2048 = 4.9e-4; the default atol (1e-4) would accept almost any output
WORKLOADS = [
    {"name": "one_head", "set": {"BATCH_HEADS": 1, "SEQ_LEN": 2049}, "public": True,
     "about": "a single head with a long sequence that is not a multiple of 32"},
    {"name": "head_dim", "set": {"BATCH_HEADS": 4, "SEQ_LEN": 1000, "HEAD_DIM": 80},
     "about": "a head dimension and a sequence length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH_HEADS": (1, 4), "SEQ_LEN": (100, 1000), "HEAD_DIM": (16, 128)},
     "about": "head count, sequence length and head dimension drawn at random"},
]


class Model(nn.Module):
    """Scaled dot-product attention probabilities (no mask, no value product)."""

    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.softmax(scores, dim=-1)


def get_inputs():
    q = torch.randn(BATCH_HEADS, SEQ_LEN, HEAD_DIM)
    k = torch.randn(BATCH_HEADS, SEQ_LEN, HEAD_DIM)
    return [q, k]


def get_init_inputs():
    return [HEAD_DIM]
