"""Product of two lower-triangular 5120 x 5120 fp32 matrices, C = tril(A @ B).

A and B are lower triangular, so C[i, j] = sum_{k=j..i} A[i, k] * B[k, j] for i >= j and 0
above the diagonal: about 1/6 of a dense matmul's multiply-adds. B is scaled by 1/sqrt(N).
"""
import torch
import torch.nn as nn

N = 5120

TAGS = ["matmul", "compute-bound"]
FLOPS = 44739242666  # N^3 / 3: ~N^3/6 multiply-adds for j <= k <= i
WORKLOADS = [
    {"name": "small", "set": {"N": 512}, "public": True, "about": "a small matrix"},
    {"name": "unaligned", "set": {"N": 1001}, "about": "a size that is not a multiple of 32"},
    {"name": "drawn", "set": {"N": (100, 1500)}, "about": "a size drawn at random"},
]


class Model(nn.Module):
    """C = torch.tril(A @ B) for lower-triangular A and B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    return [torch.tril(torch.randn(N, N)), torch.tril(torch.randn(N, N)) / N**0.5]


def get_init_inputs():
    return []
