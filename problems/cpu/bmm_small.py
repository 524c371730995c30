"""Batched matrix multiplication of 32 pairs of 128 x 256 and 256 x 128 fp32 matrices (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 32
M = 128
K = 256
N = 128

TAGS = ["matmul", "compute-bound"]


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
