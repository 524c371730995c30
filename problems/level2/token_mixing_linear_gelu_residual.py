"""MLP-Mixer token-mixing block: transpose (256, 256 tokens, 1024 channels), Linear 256 -> 1024 over tokens, GELU, Linear 1024 -> 256, transpose back, residual add, fp32.

out = x + (W2 gelu(W1 x^T + b1) + b2)^T, the MLPs acting along the token dim of each channel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
TOKENS = 256
CHANNELS = 1024
TOKEN_HIDDEN = 1024

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1}, "public": True, "about": "a batch of one sample"},
    {"name": "unaligned", "set": {"BATCH": 3, "TOKENS": 197, "CHANNELS": 333, "TOKEN_HIDDEN": 771},
     "about": "token, channel and hidden counts that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "TOKENS": (16, 400), "CHANNELS": (16, 600), "TOKEN_HIDDEN": (16, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Token-mixing MLP (no pre-norm) with a residual connection."""

    def __init__(self, tokens: int, token_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(tokens, token_hidden)
        self.fc2 = nn.Linear(token_hidden, tokens)
        with torch.no_grad():
            self.fc2.weight.mul_(3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.transpose(1, 2)
        y = self.fc2(F.gelu(self.fc1(y)))
        return x + y.transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, TOKENS, CHANNELS)]


def get_init_inputs():
    return [TOKENS, TOKEN_HIDDEN]
