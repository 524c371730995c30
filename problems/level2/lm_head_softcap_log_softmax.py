"""LM head (2048 tokens, 4096 -> 16384 vocab, no bias) + tanh logit soft-capping at 30 + log_softmax, fp32 (Gemma-2 style).

logits = cap * tanh((x @ W^T) / cap); out = log_softmax(logits, dim=-1).
"""
import torch
import torch.nn as nn

TOKENS = 2048
HIDDEN = 4096
VOCAB = 16384
SOFTCAP = 30.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 257, "HIDDEN": 1000, "VOCAB": 5003},
     "about": "a token count, hidden size and vocabulary size that are not multiples of 32"},
    {"name": "drawn", "set": {"TOKENS": (1, 400), "HIDDEN": (64, 1000), "VOCAB": (100, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Bias-free vocabulary projection, soft-cap, log-probabilities."""

    def __init__(self, hidden: int, vocab: int, softcap: float):
        super().__init__()
        # logits of std ~16, so the cap at 30 bends the tails
        self.weight = nn.Parameter(torch.randn(vocab, hidden) * (16.0 / hidden ** 0.5))
        self.softcap = softcap

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = torch.matmul(x, self.weight.t())
        logits = torch.tanh(logits / self.softcap) * self.softcap
        return torch.log_softmax(logits, dim=-1)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, VOCAB, SOFTCAP]
