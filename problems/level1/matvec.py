"""fp32 matrix-vector product: (65536 x 24576) matrix times a (24576 x 1) vector.

out[i, 0] = sum_k A[i, k] * v[k, 0]. Reading the 6.4 GB matrix once is the whole cost. v is
scaled by 1/sqrt(K) so outputs are O(1).
"""
import torch
import torch.nn as nn

M = 65536
K = 24576

TAGS = ["matmul", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"M": 100, "K": 100003}, "public": True,
     "about": "a few rows much longer than they are many"},
    {"name": "unaligned", "set": {"M": 4099, "K": 999},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "tall", "set": {"M": 100003, "K": 33}, "about": "many short rows"},
    {"name": "drawn", "set": {"M": (50, 5000), "K": (16, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out = A @ v with A (M, K) and v (K, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, v)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1) / K**0.5]


def get_init_inputs():
    return []
