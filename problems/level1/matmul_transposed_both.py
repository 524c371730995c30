"""fp32 matmul with both operands transposed: C = A.T @ B.T, A (4096 x 4096), B (6144 x 4096).

C[i, j] = sum_k A[k, i] * B[j, k] with A (K, M), B (N, K), M = K = 4096, N = 6144. B is
scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 6144

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1, "K": 2048, "N": 1001}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 999, "K": 1001, "N": 515}, "about": "M, K and N that are not multiples of 32"},
    {"name": "tall_narrow", "set": {"M": 4099, "K": 257, "N": 33}, "about": "many rows, a short K and few columns"},
    {"name": "drawn", "set": {"M": (10, 1200), "K": (16, 1200), "N": (10, 1200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A.T @ B.T, with A stored as (K, M) and B as (N, K)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


def get_inputs():
    return [torch.randn(K, M), torch.randn(N, K) / K**0.5]


def get_init_inputs():
    return []
