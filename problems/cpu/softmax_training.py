"""Row-wise softmax over the last dimension of a 2-D tensor, trained: forward and backward (CPU-sized).

Judged: the output and the gradient of x, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 1024

TAGS = ["softmax", "memory-bound", "training"]
TRAINING = True
# probabilities are ~1/1024 and the input's gradient p * (g - sum(p * g)) is as small: the default atol 1e-4 would
# accept almost any output
ATOL = 1e-6
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 100, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 4, "DIM": 20011}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (3, 200), "DIM": (2, 2000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Softmax over dim 1: out[i, j] = exp(x[i, j]) / sum_k exp(x[i, k])."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 2]


def get_init_inputs():
    return []
