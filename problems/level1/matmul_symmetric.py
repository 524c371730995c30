"""fp32 matmul of two symmetric 5120 x 5120 matrices, C = A @ B.

A = A.T and B = B.T (built as (X + X.T) / 2), so either operand can be read in whichever
orientation is cheaper. C itself is not symmetric. B is scaled by 1/sqrt(N).
"""
import torch
import torch.nn as nn

N = 5120

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "small", "set": {"N": 512}, "public": True, "about": "a small matrix"},
    {"name": "unaligned", "set": {"N": 1001}, "about": "a size that is not a multiple of 32"},
    {"name": "drawn", "set": {"N": (100, 1500)}, "about": "a size drawn at random"},
]


class Model(nn.Module):
    """C = A @ B for symmetric A and B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [(A + A.T) / 2, (B + B.T) / (2 * N**0.5)]


def get_init_inputs():
    return []
