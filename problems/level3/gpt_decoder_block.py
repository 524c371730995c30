"""GPT-2 decoder block: x + causal MHA(LN(x)), then + MLP(LN(.)) with tanh GELU (B=8, S=1024, D=1024, 16 heads, MLP 4096).

h = x + c_proj(causal_attention(c_attn(LN1(x)))); out = h + W_2 gelu_tanh(W_1 LN2(h) + b_1) + b_2.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
D_MODEL = 1024
HEADS = 16

TAGS = ["architecture", "transformer", "compute-bound"]
WORKLOADS = [
    {"name": "single_unaligned", "set": {"BATCH": 1, "SEQ": 170},
     "about": "a single short sequence whose length is not a multiple of 32"},
    {"name": "narrow", "set": {"BATCH": 2, "SEQ": 300, "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model on short sequences of ragged length"},
]


class Model(nn.Module):
    """One GPT-2 block (pre-norm, fused QKV projection, causal mask, 4x MLP with tanh GELU)."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.ln_1 = nn.LayerNorm(d_model)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.ln_2 = nn.LayerNorm(d_model)
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.mlp_proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.c_attn(self.ln_1(x)).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.c_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS]
