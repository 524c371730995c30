"""Large-K fp32 matmul: (1024 x 131072) @ (131072 x 1024), a small output from a long reduction.

C[i, j] = sum_k A[i, k] * B[k, j] over K = 131072 (split-K territory); B is scaled by
1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 1024
K = 131072
N = 1024

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1, "K": 30011, "N": 513}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 100, "K": 50021, "N": 129}, "about": "M, K and N that are not multiples of 32"},
    {"name": "drawn", "set": {"M": (10, 200), "K": (1000, 50000), "N": (10, 200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with a long inner dimension K."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
