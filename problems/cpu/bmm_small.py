"""Batched matrix multiplication of 32 pairs of 128 x 256 and 256 x 128 fp32 matrices (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 32
M = 128
K = 256
N = 128

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 3, "M": 100, "K": 257, "N": 129},
     "about": "matrix sizes that are not multiples of 32"},
    {"name": "one_pair", "set": {"BATCH": 1, "M": 33, "K": 500, "N": 300},
     "about": "a batch of one pair of non-square, unaligned matrices"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "M": (5, 150), "K": (20, 200), "N": (5, 150)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Batched matrix product: C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    # B scaled by 1/sqrt(K) so outputs are O(1).
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N) / K**0.5]


def get_init_inputs():
    return []
