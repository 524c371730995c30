"""Batched fp32 matmul: 128 independent (512 x 1024) @ (1024 x 2048) products.

C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]; B is scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

BATCH = 128
M = 512
K = 1024
N = 2048

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_product", "set": {"BATCH": 1}, "public": True, "about": "a batch of one product"},
    {"name": "unaligned", "set": {"BATCH": 3, "M": 257, "K": 999, "N": 301},
     "about": "M, K and N that are not multiples of 32"},
    {"name": "skinny", "set": {"BATCH": 2, "M": 3001, "K": 64, "N": 17},
     "about": "tall, narrow products with a short inner dim"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "M": (20, 400), "K": (16, 1200), "N": (20, 400)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = torch.bmm(A, B) with A (BATCH, M, K) and B (BATCH, K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N) / K**0.5]


def get_init_inputs():
    return []
