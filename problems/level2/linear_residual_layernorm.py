"""Post-LN sublayer output: Linear (32768 x 2048 -> 2048) + residual add + LayerNorm, fp32 (BERT-style).

out = layer_norm(x @ W^T + b + residual) with learned affine.
"""
import torch
import torch.nn as nn

TOKENS = 32768
HIDDEN = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"TOKENS": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"TOKENS": 999, "HIDDEN": 1001},
     "about": "a token count and hidden size that are not multiples of 32"},
    {"name": "tall", "set": {"TOKENS": 8191, "HIDDEN": 129}, "about": "many tokens with a small hidden size"},
    {"name": "drawn", "set": {"TOKENS": (1, 1500), "HIDDEN": (64, 1500)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """dense, add the residual input, LayerNorm (eps 1e-12 as in BERT)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(hidden))
            self.norm.bias.copy_(0.2 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(self.dense(x) + residual)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN), torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
