"""Linear on (32, 256, 4096) tokens -> 4096 features + log-avg-exp pooling over the 256 tokens + LeakyReLU, fp32.

y = x @ W^T + b; p[b, n] = logsumexp_t y[b, t, n] - log(T); out = leaky_relu(p, 0.2), shape (32, 4096).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
SEQ_LEN = 256
IN_FEATURES = 4096
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1}, "public": True, "about": "a batch of one sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 999, "IN_FEATURES": 500, "OUT_FEATURES": 1001},
     "about": "long sequences, and sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "SEQ_LEN": (1, 700), "IN_FEATURES": (64, 800),
                              "OUT_FEATURES": (64, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Smooth max-pooling over tokens (log-average-exp) of a projection, then LeakyReLU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        p = torch.logsumexp(y, dim=1) - math.log(y.shape[1])
        return F.leaky_relu(p, negative_slope=0.2)


def get_inputs():
    # tokens share a per-sample component, so the pooled features are spread around 0
    return [torch.randn(BATCH, SEQ_LEN, IN_FEATURES) + torch.randn(BATCH, 1, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
