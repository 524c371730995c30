"""Residual MLP: 4 pre-LayerNorm blocks x = x + W2 gelu(W1 LN(x)) (1024->4096->1024), final LayerNorm, on 8192 x 1024.

Each block: y = LayerNorm(x); x = x + Linear(4096->1024)(GELU(Linear(1024->4096)(y))).
The output is LayerNorm(x) after the last block.
"""
import torch
import torch.nn as nn

TOKENS = 8192
DIM = 1024
HIDDEN = 4096
BLOCKS = 4

TAGS = ["architecture", "mlp", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 100, "DIM": 768, "HIDDEN": 3000},
     "about": "a token count and hidden width that are not multiples of 128, a narrower model"},
    {"name": "drawn", "set": {"TOKENS": (1, 250), "DIM": 512, "HIDDEN": 2048},
     "about": "a narrower model on a token count drawn at random"},
]


class ResidualBlock(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class Model(nn.Module):
    """BLOCKS pre-norm residual MLP blocks and a final LayerNorm."""

    def __init__(self, dim: int, hidden: int, blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[ResidualBlock(dim, hidden) for _ in range(blocks)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.blocks(x))


def get_inputs():
    return [torch.randn(TOKENS, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN, BLOCKS]
