"""Sum over dim 1 (keepdim) of a 128 x 4096 x 4095 fp32 tensor."""
import torch
import torch.nn as nn

BATCH = 128
DIM1 = 4096
DIM2 = 4095
REDUCE_DIM = 1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"BATCH": 1, "DIM2": 1001}, "public": True,
     "about": "a batch of one with a row length that is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "DIM1": 999, "DIM2": 2049},
     "about": "a reduced length and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "DIM1": (2, 2000), "DIM2": (50, 1000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[b, 0, k] = sum over j of x[b, j, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
