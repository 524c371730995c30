"""Pre-LN transformer encoder block: x + MHA(LN(x)), then + MLP(LN(.)) with GELU (B=8, S=1024, D=1024, 16 heads, MLP 4096).

h = x + W_o softmax(q k^T / sqrt(d)) v with q, k, v from LN1(x);
out = h + W_2 GELU(W_1 LN2(h) + b_1) + b_2 (exact erf GELU). No mask, no dropout.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
D_MODEL = 1024
HEADS = 16
D_FF = 4096

TAGS = ["architecture", "transformer", "compute-bound"]
WORKLOADS = [
    {"name": "ragged", "set": {"BATCH": 2, "SEQ": 77},
     "about": "a small batch of short sequences whose length is not a multiple of 32"},
    {"name": "narrow", "set": {"BATCH": 1, "SEQ": 600, "D_MODEL": 512, "HEADS": 8, "D_FF": 1500},
     "about": "one sequence of ragged length through a narrower layer whose MLP width is not a multiple of 32"},
]


class Model(nn.Module):
    """One pre-norm encoder layer (as in ViT / GPT-2 style layouts, bidirectional)."""

    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, D_FF]
