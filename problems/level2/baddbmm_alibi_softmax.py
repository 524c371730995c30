"""BLOOM attention probabilities: baddbmm(ALiBi bias, q, k^T, alpha=1/sqrt(64)) + causal mask + softmax, (4 x 32 heads, 2048, 2048), fp32.

scores = alibi + q @ k^T / sqrt(d) with alibi[b*H + h, 0, j] = slope_h * j; causal positions j > i get -inf;
out = softmax(scores, dim=-1), shape (128, 2048, 2048).
"""
import math

import torch
import torch.nn as nn

BATCH = 4
NUM_HEADS = 32
SEQ_LEN = 2048
HEAD_DIM = 64

TAGS = ["fusion", "matmul", "memory-bound"]
ATOL = 1e-6  # probabilities average 1/2048 = 4.9e-4; the default atol (1e-4) would accept almost any output
RTOL = 1e-3  # ALiBi logits reach ~100, where exp amplifies rounding: the fp32 reference is 1.2e-4 (relative) from float64
WORKLOADS = [
    {"name": "short_seq", "set": {"BATCH": 1, "NUM_HEADS": 4, "SEQ_LEN": 999}, "public": True,
     "about": "one sequence, fewer heads, a sequence length that is not a multiple of 32"},
    {"name": "head_dim", "set": {"BATCH": 2, "NUM_HEADS": 6, "SEQ_LEN": 513, "HEAD_DIM": 80},
     "about": "a head dimension and a sequence length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "NUM_HEADS": (1, 4), "SEQ_LEN": (100, 600), "HEAD_DIM": (16, 128)},
     "about": "batch, head count, sequence length and head dimension drawn at random"},
]


class Model(nn.Module):
    """ALiBi-biased, causally masked attention probabilities computed with baddbmm."""

    def __init__(self, batch: int, num_heads: int, seq_len: int, head_dim: int):
        super().__init__()
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / num_heads) for h in range(num_heads)])
        alibi = slopes[:, None] * torch.arange(seq_len, dtype=torch.float32)[None, :]  # (H, L)
        self.register_buffer("alibi", alibi.repeat(batch, 1).unsqueeze(1))  # (B*H, 1, L)
        self.register_buffer("causal", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))
        self.norm_factor = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = torch.baddbmm(self.alibi, q, k.transpose(1, 2), beta=1.0, alpha=self.norm_factor)
        scores = scores.masked_fill(self.causal, float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    q = torch.randn(BATCH * NUM_HEADS, SEQ_LEN, HEAD_DIM)
    k = torch.randn(BATCH * NUM_HEADS, SEQ_LEN, HEAD_DIM)
    return [q, k]


def get_init_inputs():
    return [BATCH, NUM_HEADS, SEQ_LEN, HEAD_DIM]
