"""Sum reduction over the middle dimension of a 3-D tensor, keeping the reduced dimension (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 128
DIM1 = 256
DIM2 = 255
REDUCE_DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 7, "DIM1": 1001, "DIM2": 33},
     "about": "a reduced length and an inner length that are not multiples of 32"},
    {"name": "long_reduce", "set": {"BATCH": 3, "DIM1": 20001, "DIM2": 7},
     "about": "a very long reduced dimension and a very short inner one"},
    {"name": "one_batch", "set": {"BATCH": 1, "DIM1": 100, "DIM2": 4099},
     "about": "a batch of one with a long inner dimension"},
    {"name": "drawn", "set": {"BATCH": (1, 10), "DIM1": (1, 300), "DIM2": (5, 300)}, "about": "sizes drawn at random"},
]


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
