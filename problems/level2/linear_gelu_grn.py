"""ConvNeXt-V2 MLP first half on tokens: Linear (8 x 1024 tokens, 2048 -> 8192) + GELU + Global Response Normalization over the tokens, fp32.

y = gelu(x @ W^T + b); g = ||y||_2 over tokens (B, 1, C); n = g / (mean_C g + 1e-6); out = gamma * (y * n) + beta + y.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
TOKENS = 1024
IN_FEATURES = 2048
HIDDEN = 8192

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "TOKENS": 256, "HIDDEN": 2048},
     "public": True, "about": "a batch of one sample"},
    {"name": "unaligned", "set": {"BATCH": 3, "TOKENS": 257, "IN_FEATURES": 1000, "HIDDEN": 1001},
     "about": "token and feature counts that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "TOKENS": (1, 400), "IN_FEATURES": (64, 800), "HIDDEN": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """pwconv1 as a Linear on (B, T, C) tokens, GELU, GRN with learned gamma/beta."""

    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden)
        self.gamma = nn.Parameter(0.5 * torch.randn(1, 1, hidden))
        self.beta = nn.Parameter(0.2 * torch.randn(1, 1, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.gelu(self.fc(x))
        g = torch.norm(y, p=2, dim=1, keepdim=True)
        n = g / (g.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (y * n) + self.beta + y


def get_inputs():
    return [torch.randn(BATCH, TOKENS, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN]
