"""Additive (Bahdanau) attention pooling: tanh(Linear 4096 -> 4096) on (32, 256, 4096) tokens, score with a vector, softmax over tokens, weighted sum, fp32.

e = tanh(x @ W^T + b); a = softmax(e @ v, dim=1); out[b] = sum_t a[b, t] * x[b, t], shape (32, 4096).
"""
import torch
import torch.nn as nn

BATCH = 32
SEQ_LEN = 256
FEATURES = 4096
ATTN_DIM = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "SEQ_LEN": 777, "FEATURES": 1000, "ATTN_DIM": 600}, "public": True,
     "about": "a batch of one long sequence, feature sizes not multiples of 32"},
    {"name": "unaligned", "set": {"BATCH": 5, "SEQ_LEN": 99, "FEATURES": 1001, "ATTN_DIM": 513},
     "about": "a short sequence and feature and attention sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "SEQ_LEN": (20, 300), "FEATURES": (64, 700), "ATTN_DIM": (64, 700)},
     "about": "batch, sequence and feature sizes drawn at random"},
]


class Model(nn.Module):
    """Learned attention pooling of a token sequence into one vector per sample."""

    def __init__(self, features: int, attn_dim: int):
        super().__init__()
        self.proj = nn.Linear(features, attn_dim)
        with torch.no_grad():
            self.proj.weight.mul_(2.0)
        self.v = nn.Parameter(torch.randn(attn_dim) * (3.0 / attn_dim ** 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.tanh(self.proj(x))
        a = torch.softmax(torch.matmul(e, self.v), dim=1)
        return (a.unsqueeze(-1) * x).sum(dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, FEATURES)]


def get_init_inputs():
    return [FEATURES, ATTN_DIM]
