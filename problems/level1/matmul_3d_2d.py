"""Batch of matrices times one matrix: (16 x 4096 x 1024) @ (1024 x 2048) in fp32.

C[b, i, j] = sum_k A[b, i, k] * B[k, j]; the same B multiplies every batch entry. B is scaled
by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

BATCH = 16
M = 4096
K = 1024
N = 2048

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "M": 1000}, "public": True, "about": "a batch of one"},
    {"name": "unaligned", "set": {"BATCH": 3, "M": 999, "K": 1001, "N": 515},
     "about": "M, K and N that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "M": (3, 700), "K": (16, 1000), "N": (16, 1000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = A @ B with A (BATCH, M, K) and a shared B (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(K, N) / K**0.5]


def get_init_inputs():
    return []
