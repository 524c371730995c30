"""Product of two upper-triangular 6144 x 6144 fp32 matrices, C = triu(A @ B).

A and B are upper triangular, so C[i, j] = sum_{k=i..j} A[i, k] * B[k, j] for i <= j and 0
below the diagonal: about 1/6 of a dense matmul's multiply-adds. B is scaled by 1/sqrt(N).
"""
import torch
import torch.nn as nn

N = 6144

TAGS = ["matmul", "compute-bound"]
FLOPS = 77309411328  # N^3 / 3: ~N^3/6 multiply-adds for i <= k <= j
WORKLOADS = [
    {"name": "small", "set": {"N": 512}, "public": True, "about": "a small matrix"},
    {"name": "unaligned", "set": {"N": 1001}, "about": "a size that is not a multiple of 32"},
    {"name": "drawn", "set": {"N": (100, 1500)}, "about": "a size drawn at random"},
]


class Model(nn.Module):
    """C = torch.triu(A @ B) for upper-triangular A and B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(A, B))


def get_inputs():
    return [torch.triu(torch.randn(N, N)), torch.triu(torch.randn(N, N)) / N**0.5]


def get_init_inputs():
    return []
