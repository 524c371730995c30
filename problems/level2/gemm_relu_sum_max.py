"""Linear on (64, 128, 4096) tokens -> 4096 + ReLU + sum over features + max over the 128 tokens, fp32.

s[b, t] = sum_n relu(x[b, t] @ W^T + b)[n]; out[b] = max_t s[b, t], shape (64,).
"""
import torch
import torch.nn as nn

BATCH = 64
SEQ_LEN = 128
IN_FEATURES = 4096
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"SEQ_LEN": 1}, "public": True, "about": "sequences of a single token"},
    {"name": "unaligned", "set": {"BATCH": 21, "SEQ_LEN": 77, "IN_FEATURES": 600, "OUT_FEATURES": 1001},
     "about": "batch, sequence and feature sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (8, 40), "SEQ_LEN": (1, 150), "IN_FEATURES": (64, 800),
                              "OUT_FEATURES": (64, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Per-token activation mass (sum of ReLU features), max-pooled over tokens."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.relu(self.fc(x)).sum(dim=-1)
        return s.amax(dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
