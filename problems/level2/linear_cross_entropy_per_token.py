"""LM head (4096 tokens, 2048 -> 16384 vocab) + per-token cross-entropy with label smoothing 0.1 (no reduction), fp32.

logits = x @ W^T + b; out[t] = cross_entropy(logits[t], label[t], label_smoothing=0.1), shape (4096,).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
HIDDEN = 2048
VOCAB = 16384
LABEL_SMOOTHING = 0.1

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_tokens", "set": {"TOKENS": 7}, "public": True, "about": "a handful of tokens"},
    {"name": "unaligned", "set": {"TOKENS": 257, "HIDDEN": 1000, "VOCAB": 5003},
     "about": "a token count, hidden size and vocabulary size that are not multiples of 32"},
    {"name": "drawn", "set": {"TOKENS": (2, 400), "HIDDEN": (64, 1000), "VOCAB": (100, 5000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Vocabulary projection, log_softmax, smoothed NLL per token."""

    def __init__(self, hidden: int, vocab: int, label_smoothing: float):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab)
        with torch.no_grad():  # logits of std ~2 so per-token losses spread out
            self.lm_head.weight.mul_(3.5)
        self.label_smoothing = label_smoothing

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(x)
        return F.cross_entropy(logits, labels, reduction="none", label_smoothing=self.label_smoothing)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN), torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return [HIDDEN, VOCAB, LABEL_SMOOTHING]
