"""Short-wide fp32 matmul: (512 x 1024) @ (1024 x 262144), N far larger than M and K.

C[i, j] = sum_k A[i, k] * B[k, j]; B is scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 512
K = 1024
N = 262144

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1, "K": 512, "N": 50001}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 33, "K": 511, "N": 20011}, "about": "M, K and N that are not multiples of 32"},
    {"name": "drawn", "set": {"M": (1, 128), "K": (16, 512), "N": (1000, 20000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with a small A (M, K) and a very wide B (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
