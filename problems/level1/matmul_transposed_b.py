"""fp32 matmul with a transposed right operand: C = A @ B.T, B stored as (4096 x 4096).

C[i, j] = sum_k A[i, k] * B[j, k] with A (M, K), B (N, K), M = 6144, K = N = 4096. B is
scaled by 1/sqrt(K) so entries of C are O(1).
"""
import torch
import torch.nn as nn

M = 6144
K = 4096
N = 4096

TAGS = ["matmul", "compute-bound"]


class Model(nn.Module):
    """C = A @ B.T, where B is stored as (N, K)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K) / K**0.5]


def get_init_inputs():
    return []
