"""Post-LN transformer encoder block (original Transformer): LN(x + MHA(x)), then LN(. + ReLU MLP) (B=16, S=512, D=1024, 16 heads, MLP 4096).

h = LN1(x + W_o softmax(q k^T / sqrt(d)) v) with q, k, v from x;
out = LN2(h + W_2 ReLU(W_1 h + b_1) + b_2). No mask, no dropout.
"""
import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 512
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
    """One post-norm encoder layer, "Attention Is All You Need" layout."""

    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.attention(x))
        return self.ln2(x + self.fc2(torch.relu(self.fc1(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS, D_FF]
