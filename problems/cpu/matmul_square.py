"""Square matrix multiplication C = A @ B of two 512 x 512 fp32 matrices (CPU-sized)."""
import torch
import torch.nn as nn

N = 512

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"N": 257}, "about": "a matrix size that is not a multiple of 32"},
    {"name": "drawn", "set": {"N": (20, 250)}, "about": "a matrix size drawn at random"},
]


class Model(nn.Module):
    """Matrix product: C[i, j] = sum_k A[i, k] * B[k, j]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    # B scaled by 1/sqrt(N) so outputs are O(1) and fp32 summation-order differences stay
    # well inside the default tolerance.
    return [torch.randn(N, N), torch.randn(N, N) / N**0.5]


def get_init_inputs():
    return []
