"""Encoder attention probabilities with key padding: matmul of (2, 16, 4096, 64) q and k^T, scale, mask padded keys with -inf, softmax, fp32.

scores = q @ k^T / sqrt(64) (B, H, L, L); keys at positions >= length[b] are masked; out = softmax(scores, dim=-1).
"""
import math

import torch
import torch.nn as nn

BATCH = 2
NUM_HEADS = 16
SEQ_LEN = 4096
HEAD_DIM = 64

TAGS = ["fusion", "matmul", "memory-bound"]
ATOL = 1e-6  # probabilities average ~1/4096 = 2.4e-4; the default atol (1e-4) would accept almost any output
WORKLOADS = [
    {"name": "short", "set": {"SEQ_LEN": 512}, "public": True, "about": "shorter sequences"},
    {"name": "unaligned", "set": {"BATCH": 3, "NUM_HEADS": 5, "SEQ_LEN": 999, "HEAD_DIM": 40},
     "about": "a sequence length, head count and head size that are not powers of two"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "NUM_HEADS": (1, 8), "SEQ_LEN": (100, 1200), "HEAD_DIM": (16, 128)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """4-D torch.matmul attention scores with a (B, L) boolean key-padding mask (True = padding)."""

    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    q = torch.randn(BATCH, NUM_HEADS, SEQ_LEN, HEAD_DIM)
    k = torch.randn(BATCH, NUM_HEADS, SEQ_LEN, HEAD_DIM)
    lengths = torch.randint(SEQ_LEN // 2, SEQ_LEN + 1, (BATCH,))
    key_padding_mask = torch.arange(SEQ_LEN)[None, :] >= lengths[:, None]
    return [q, k, key_padding_mask]


def get_init_inputs():
    return [HEAD_DIM]
