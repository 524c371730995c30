"""fp32 vector-matrix product: a (1 x 24576) row vector times a (24576 x 65536) matrix.

out[0, j] = sum_k v[0, k] * B[k, j]: each output reduces down a column of the row-major B, so
the 6.4 GB matrix must be streamed once with coalesced reads. v is scaled by 1/sqrt(K) so
outputs are O(1).
"""
import torch
import torch.nn as nn

K = 24576
N = 65536

TAGS = ["matmul", "memory-bound"]
WORKLOADS = [
    {"name": "wide", "set": {"K": 33, "N": 100003}, "public": True, "about": "a short vector and a very wide matrix"},
    {"name": "unaligned", "set": {"K": 4099, "N": 999},
     "about": "a vector length and a width that are not multiples of 32"},
    {"name": "long_k", "set": {"K": 100003, "N": 65}, "about": "a long vector and a narrow matrix"},
    {"name": "drawn", "set": {"K": (16, 5000), "N": (50, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = v @ B with v (1, K) and B (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, v: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(v, B)


def get_inputs():
    return [torch.randn(1, K) / K**0.5, torch.randn(K, N)]


def get_init_inputs():
    return []
