"""Fused QKV projection (2 x 2048 tokens, 3072 -> 3 x 3072) split into q, k, v heads with per-head RMSNorm on q and k, fp32.

qkv = x @ W^T; q, k, v = split; each viewed as (B, T, 24, 128) and transposed to (B, 24, T, 128);
q and k get RMSNorm over the head dim with learned weights (QK-norm). Returns (q, k, v).
"""
import torch
import torch.nn as nn

BATCH = 2
SEQ_LEN = 2048
HIDDEN = 3072
NUM_HEADS = 24
EPS = 1e-6

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"BATCH": 1, "SEQ_LEN": 1}, "public": True, "about": "a single token"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 157, "HIDDEN": 1000, "NUM_HEADS": 10},
     "about": "a sequence length, hidden size and head size that are not powers of two"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "SEQ_LEN": (1, 500), "HIDDEN": 768, "NUM_HEADS": 12},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """One bias-free (hidden -> 3 hidden) projection, head split, QK RMSNorm, (B, H, T, D) layout."""

    def __init__(self, hidden: int, num_heads: int, eps: float):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.q_norm_weight = nn.Parameter(1.0 + 0.2 * torch.randn(self.head_dim))
        self.k_norm_weight = nn.Parameter(1.0 + 0.2 * torch.randn(self.head_dim))
        self.eps = eps

    def _rms(self, t: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return t * torch.rsqrt(t.pow(2).mean(dim=-1, keepdim=True) + self.eps) * w

    def forward(self, x: torch.Tensor):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.num_heads, self.head_dim)
        k = k.view(b, t, self.num_heads, self.head_dim)
        v = v.view(b, t, self.num_heads, self.head_dim)
        q = self._rms(q, self.q_norm_weight).transpose(1, 2)
        k = self._rms(k, self.k_norm_weight).transpose(1, 2)
        return q, k, v.transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, NUM_HEADS, EPS]
