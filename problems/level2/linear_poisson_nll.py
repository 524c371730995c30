"""Count regression head: Linear (4096 x 8192 -> 4096 log-rates) + Poisson negative log-likelihood summed per sample, fp32.

z = x @ W^T + b (log rate); out[i] = sum_g (exp(z[i, g]) - counts[i, g] * z[i, g]) (poisson_nll_loss, log_input, no full term).
"""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 8192
NUM_OUTPUTS = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "NUM_OUTPUTS": 1001},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (2, 700), "IN_FEATURES": (64, 1500), "NUM_OUTPUTS": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Predicts a log-rate per output (e.g. gene counts) and returns each sample's Poisson NLL."""

    def __init__(self, in_features: int, num_outputs: int):
        super().__init__()
        self.fc = nn.Linear(in_features, num_outputs)

    def forward(self, x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        log_rate = self.fc(x)
        return (torch.exp(log_rate) - counts * log_rate).sum(dim=-1)


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    counts = torch.randint(0, 6, (BATCH, NUM_OUTPUTS)).float()
    return [x, counts]


def get_init_inputs():
    return [IN_FEATURES, NUM_OUTPUTS]
