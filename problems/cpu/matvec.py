"""Dense matrix-vector product (CPU-sized)."""
import torch
import torch.nn as nn

M = 4096
K = 2048

TAGS = ["matmul", "memory-bound"]


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
