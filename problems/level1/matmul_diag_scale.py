"""Row scaling written as a dense matmul: C = diag(a) @ B with a (4096,), B (4096 x 8192).

C[i, j] = a[i] * B[i, j]. The reference builds the dense 4096 x 4096 diagonal matrix and runs a
full matmul; a kernel only needs to read B and write C once.
"""
import torch
import torch.nn as nn

N = 4096
M = 8192

TAGS = ["matmul", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"N": 1, "M": 100003}, "public": True, "about": "a single long row"},
    {"name": "unaligned", "set": {"N": 1001, "M": 1003}, "about": "sizes that are not multiples of 32"},
    {"name": "tall", "set": {"N": 2049, "M": 33}, "about": "many short rows"},
    {"name": "drawn", "set": {"N": (4, 1500), "M": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = torch.diag(a) @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ B


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
