"""fp32 matmul with irregular sizes: (8205 x 2949) @ (2949 x 5087), none a multiple of 16.

C[i, j] = sum_k A[i, k] * B[k, j]; tiles must handle ragged edges in M, N and K. B is scaled
by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 8205
K = 2949
N = 5087

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1, "K": 2048, "N": 1001}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 999, "K": 1001, "N": 515}, "about": "M, K and N that are not multiples of 32"},
    {"name": "tall_narrow", "set": {"M": 4099, "K": 257, "N": 33}, "about": "many rows, a short K and few columns"},
    {"name": "drawn", "set": {"M": (10, 1200), "K": (16, 1200), "N": (10, 1200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with odd-sized A (M, K) and B (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
