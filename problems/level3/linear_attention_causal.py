"""Causal linear attention with the elu+1 feature map via cumulative sums of k v^T outer products (B=4, S=4096, D=512, 8 heads).

phi(t) = elu(t) + 1; S_i = sum_{j<=i} phi(k_j) v_j^T (d x d per head), z_i = sum_{j<=i} phi(k_j);
o_i = phi(q_i)^T S_i / (phi(q_i) . z_i + eps), then W_o. (Katharopoulos et al. 2020, with Q/K/V projections.)
The reference materializes every prefix state S_i (B, H, S, d, d); a good kernel keeps a running state.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 4096
D_MODEL = 512
HEADS = 8
EPS = 1e-6

TAGS = ["architecture", "attention", "memory-bound"]

ATOL = 1e-5  # outputs are positive-weighted averages over up to 4096 values, |out| is only ~1e-2
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 250, "D_MODEL": 256, "HEADS": 4},
     "about": "a single sequence whose length is not a multiple of 32, a narrower model with fewer heads"},
    {"name": "other_heads", "set": {"BATCH": 1, "SEQ": 150, "D_MODEL": 384, "HEADS": 4},
     "about": "a narrower model with fewer, larger heads (head size not a power of two)"},
    {"name": "drawn", "set": {"BATCH": 1, "SEQ": (50, 200)}, "about": "sequence length drawn at random"},
]


class Model(nn.Module):
    """Linear-transformer attention layer (causal, written with cumsum)."""

    def __init__(self, d_model: int, heads: int, eps: float):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.eps = eps
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = F.elu(qkv[0]) + 1, F.elu(qkv[1]) + 1, qkv[2]                       # (B, H, S, d)
        kv = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)                  # (B, H, S, d, d)
        z = torch.cumsum(k, dim=2)                                                   # (B, H, S, d)
        num = torch.matmul(q.unsqueeze(-2), kv).squeeze(-2)                          # (B, H, S, d)
        den = (q * z).sum(-1, keepdim=True) + self.eps
        out = (num / den).transpose(1, 2).reshape(b, s, d)
        return self.out_proj(out)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, EPS]
