"""Scaled dot-product attention softmax(Q K^T / sqrt(d)) V, batch 4, 8 heads, sequence 128, head dim 64 (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 4
HEADS = 8
SEQ = 128
HEAD_DIM = 64

TAGS = ["attention", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned_seq", "set": {"BATCH": 1, "HEADS": 3, "SEQ": 131},
     "about": "a single batch with a sequence length that is not a multiple of 32"},
    {"name": "head_dim", "set": {"BATCH": 2, "HEADS": 2, "SEQ": 96, "HEAD_DIM": 80},
     "about": "a head dimension that is not a multiple of 32 and a shorter sequence"},
    {"name": "drawn", "set": {"BATCH": 1, "HEADS": 2, "SEQ": (10, 160), "HEAD_DIM": 64},
     "about": "a sequence length drawn at random"},
]


class Model(nn.Module):
    """Non-causal attention per (batch, head): out = softmax(Q K^T * HEAD_DIM^-0.5, dim=-1) V."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * q.shape[-1] ** -0.5
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
