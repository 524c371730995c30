"""LM head (2048 tokens, 1024 -> 16384 vocab, with bias) + per-token cross-entropy (no reduction), fp32, trained:
forward and backward.

logits = x @ W^T + b; out[t] = logsumexp(logits[t]) - logits[t, label[t]], shape (2048,). Judged: the per-token
losses, the gradient of x and the gradients of the head's weight and bias, for an upstream gradient (one value per
token) drawn anew for every call. The labels are integers and get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 2048
HIDDEN = 1024
VOCAB = 16384

TAGS = ["fusion", "matmul", "compute-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "few_tokens", "set": {"TOKENS": 7, "VOCAB": 300}, "public": True,
     "about": "a handful of tokens over a small vocabulary (over a large one, the head's gradients are mostly ~0)"},
    {"name": "unaligned", "set": {"TOKENS": 257, "HIDDEN": 1000, "VOCAB": 5003},
     "about": "a token count, hidden size and vocabulary size that are not multiples of 32"},
    {"name": "drawn", "set": {"TOKENS": (16, 400), "HIDDEN": (64, 1000), "VOCAB": (100, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Vocabulary projection, then cross-entropy per token against integer labels."""

    def __init__(self, hidden: int, vocab: int):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab)
        with torch.no_grad():  # logits of std ~2 so per-token losses spread out
            self.lm_head.weight.mul_(3.5)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.lm_head(x), labels, reduction="none")


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN), torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return [HIDDEN, VOCAB]
