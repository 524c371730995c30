"""Small-K fp32 matmul: (32768 x 64) @ (64 x 32768), a large output from a short reduction.

C[i, j] = sum_k A[i, k] * B[k, j] over K = 64; writing the 4.3 GB output is a large share of
the cost. B is scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 32768
K = 64
N = 32768

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"M": 1}, "public": True, "about": "a single output row"},
    {"name": "unaligned", "set": {"M": 2049, "K": 33, "N": 1501}, "about": "M, K and N that are not multiples of 32"},
    {"name": "drawn", "set": {"M": (10, 2000), "K": (1, 100), "N": (10, 2000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with a short inner dimension K."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
