"""Sum reduction over the middle dimension of a 3-D tensor, keeping the reduced dimension (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 128
DIM1 = 256
DIM2 = 255
REDUCE_DIM = 1

TAGS = ["reduction", "memory-bound"]


class Model(nn.Module):
    """Sum over one dimension with keepdim: out[b, 0, k] = sum_i x[b, i, k] for dim=1."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
