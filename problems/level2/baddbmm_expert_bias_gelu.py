"""Batched MoE expert up-projection: baddbmm(bias, x, W) for 8 experts x 2048 tokens (4096 -> 2048) + GELU + routing-weight scaling, fp32.

h[e] = gelu(b[e] + x[e] @ W[e]); out[e, c] = gate[e, c] * h[e, c], shape (8, 2048, 2048).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_EXPERTS = 8
CAPACITY = 2048
HIDDEN = 4096
FFN = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_tokens", "set": {"NUM_EXPERTS": 1, "CAPACITY": 7}, "public": True,
     "about": "one expert with a handful of tokens"},
    {"name": "unaligned", "set": {"NUM_EXPERTS": 3, "CAPACITY": 333, "HIDDEN": 1000, "FFN": 700},
     "about": "a token count and matrix sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"NUM_EXPERTS": (1, 6), "CAPACITY": (1, 200), "HIDDEN": (64, 1000), "FFN": (64, 1000)},
     "about": "expert count, token count and matrix sizes drawn at random"},
]


class Model(nn.Module):
    """Per-expert weights stacked into one (E, hidden, ffn) tensor, applied with baddbmm."""

    def __init__(self, num_experts: int, hidden: int, ffn: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_experts, hidden, ffn) / hidden ** 0.5)
        self.bias = nn.Parameter(0.3 * torch.randn(num_experts, 1, ffn))

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        h = F.gelu(torch.baddbmm(self.bias, x, self.weight))
        return h * gate


def get_inputs():
    x = torch.randn(NUM_EXPERTS, CAPACITY, HIDDEN)
    gate = torch.rand(NUM_EXPERTS, CAPACITY, 1)  # routing weight of each dispatched token
    return [x, gate]


def get_init_inputs():
    return [NUM_EXPERTS, HIDDEN, FFN]
