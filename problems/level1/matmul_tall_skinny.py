"""Tall-skinny fp32 matmul: (2097152 x 256) @ (256 x 256), M far larger than K and N.

C[i, j] = sum_k A[i, k] * B[k, j]; B is scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 2097152
K = 256
N = 256

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 20001, "K": 255, "N": 129}, "about": "M, K and N that are not multiples of 32"},
    {"name": "drawn", "set": {"M": (100, 20000), "K": (16, 300), "N": (16, 200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with a very tall A (M, K) and a small B (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
