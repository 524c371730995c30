"""MoE router: 32768 tokens x 7168 hidden -> 256 expert logits (no bias), softmax, top-8, renormalize the kept weights, fp32.

probs = softmax(x @ W^T); w = topk(probs, 8) (sorted, descending); out = w / w.sum(-1), shape (32768, 8).
"""
import torch
import torch.nn as nn

TOKENS = 32768
HIDDEN = 7168
NUM_EXPERTS = 256
TOP_K = 8

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1000, "NUM_EXPERTS": 100, "TOP_K": 6},
     "about": "a token count, hidden size and expert count that are not multiples of 32, and another top-k"},
    {"name": "drawn", "set": {"TOKENS": (1, 700), "HIDDEN": (64, 1500), "NUM_EXPERTS": (16, 300)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Returns the renormalized routing weights of the top-k experts per token (values only)."""

    def __init__(self, hidden: int, num_experts: int, top_k: int):
        super().__init__()
        self.gate = nn.Parameter(torch.randn(num_experts, hidden) / hidden ** 0.5)
        self.top_k = top_k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(torch.matmul(x, self.gate.t()), dim=-1)
        weights, _ = torch.topk(probs, self.top_k, dim=-1)
        return weights / weights.sum(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, NUM_EXPERTS, TOP_K]
