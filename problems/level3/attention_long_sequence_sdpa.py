"""Causal scaled dot-product attention over a long sequence via F.scaled_dot_product_attention (B=2, 16 heads, S=8192, head dim 64).

out = softmax(q k^T / sqrt(64) + causal mask) v for q, k, v of shape (B, H, S, d). The S x S scores (8.6 GB per
batch of heads) must never be materialized: this is the flash-attention setting.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
HEADS = 16
SEQ = 8192
HEAD_DIM = 64

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 900},
     "about": "a single sequence whose length is not a multiple of 32"},
    {"name": "large_heads", "set": {"BATCH": 1, "HEADS": 8, "SEQ": 777, "HEAD_DIM": 128},
     "about": "a larger head size and a ragged sequence length"},
    {"name": "drawn", "set": {"BATCH": (1, 2), "HEADS": 4, "SEQ": (300, 1400)},
     "about": "batch and sequence length drawn at random"},
]


class Model(nn.Module):
    """Fused causal attention; PyTorch picks a memory-efficient backend for fp32."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
