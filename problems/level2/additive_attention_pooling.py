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
