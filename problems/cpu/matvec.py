"""Dense matrix-vector product (CPU-sized)."""
import torch
import torch.nn as nn

M = 4096
K = 2048

TAGS = ["matmul", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"M": 999, "K": 777},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "wide", "set": {"M": 7, "K": 50001}, "about": "a few very long rows"},
    {"name": "tall", "set": {"M": 30001, "K": 10}, "about": "many very short rows"},
    {"name": "drawn", "set": {"M": (16, 500), "K": (2, 2000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Matrix-vector product: out[i] = sum_k A[i, k] * v[k]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, v)


def get_inputs():
    # v scaled by 1/sqrt(K) so outputs are O(1) and fp32 summation-order differences stay
    # well inside the default tolerance.
    return [torch.randn(M, K), torch.randn(K) / K**0.5]


def get_init_inputs():
    return []
