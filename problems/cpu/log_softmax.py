"""Row-wise log-softmax over the last dimension of a (2048, 2048) tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 2048
DIM = 2048

TAGS = ["softmax", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 100, "DIM": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 3, "DIM": 65537}, "about": "a few very long rows of odd length"},
    {"name": "drawn", "set": {"BATCH": (3, 200), "DIM": (2, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """LogSoftmax over dim 1: out[i, j] = x[i, j] - log(sum_k exp(x[i, k]))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    # Scaled so a naive exp without max-subtraction overflows on some rows.
    return [torch.randn(BATCH, DIM) * 20]


def get_init_inputs():
    return []
