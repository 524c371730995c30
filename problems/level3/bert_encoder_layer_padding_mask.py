"""BERT encoder layer with a key padding mask from per-sequence lengths (B=16, S=512, D=1024, 16 heads, FFN 4096).

attention_mask[b, j] is True for real tokens (the first len_b >= S/2 positions) and False for padding; padded keys get
-inf before the softmax. h = LN1(x + W_o attn(x)); out = LN2(h + W_2 GELU(W_1 h + b_1) + b_2) (post-LN, erf GELU).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

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
    """One BERT-large shaped layer; every position is computed, padded keys are excluded from attention."""

    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.attn_out = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model, eps=1e-12)
        self.intermediate = nn.Linear(d_model, d_ff)
        self.output = nn.Linear(d_ff, d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.query(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.key(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.value(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~attention_mask[:, None, None, :], float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        h = self.ln1(x + self.attn_out(torch.matmul(attn, v).transpose(1, 2).reshape(b, s, d)))
        return self.ln2(h + self.output(F.gelu(self.intermediate(h))))


def get_inputs():
    x = torch.randn(BATCH, SEQ, D_MODEL)
    lengths = torch.randint(SEQ // 2, SEQ + 1, (BATCH, 1))
    attention_mask = torch.arange(SEQ).unsqueeze(0) < lengths
    return [x, attention_mask]


def get_init_inputs():
    return [D_MODEL, HEADS, D_FF]
