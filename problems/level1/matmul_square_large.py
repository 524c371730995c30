"""Square fp32 matrix multiplication C = A @ B with 6144 x 6144 matrices.

C[i, j] = sum_k A[i, k] * B[k, j]. B is scaled by 1/sqrt(N) so entries of C are O(1).
"""
import torch
import torch.nn as nn

N = 6144

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "small", "set": {"N": 512}, "public": True, "about": "a small matrix"},
    {"name": "unaligned", "set": {"N": 1001}, "about": "a size that is not a multiple of 32"},
    {"name": "drawn", "set": {"N": (100, 1500)}, "about": "a size drawn at random"},
]


class Model(nn.Module):
    """C = A @ B for square matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N) / N**0.5]


def get_init_inputs():
    return []
