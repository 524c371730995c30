"""Cross-attention: 1024 decoder queries attend over 4096 encoder keys/values (B=8, D=1024, 16 heads).

q = y W_q (decoder states y: B x 1024 x D), k = m W_k, v = m W_v (encoder memory m: B x 4096 x D);
out = concat_h(softmax(q_h k_h^T / sqrt(d)) v_h) W_o + b_o. No mask.
"""
import math

import torch
import torch.nn as nn

BATCH = 8
TGT_LEN = 1024
SRC_LEN = 4096
D_MODEL = 1024
HEADS = 16

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 1, "TGT_LEN": 200, "SRC_LEN": 700},
     "about": "query and memory lengths that are not multiples of 32"},
    {"name": "few_queries", "set": {"BATCH": 1, "TGT_LEN": 5, "SRC_LEN": 1500, "D_MODEL": 768, "HEADS": 8},
     "about": "a handful of queries over a long memory, in a narrower model with larger heads"},
    {"name": "drawn", "set": {"BATCH": 1, "TGT_LEN": (50, 400), "SRC_LEN": (100, 1000), "D_MODEL": 512, "HEADS": 8},
     "about": "a narrower model; query and memory lengths drawn at random"},
]


class Model(nn.Module):
    """Encoder-decoder attention with a fused K/V projection of the encoder memory."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.kv_proj = nn.Linear(d_model, 2 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        # Peaked attention, as in a trained model: q, k entries have variance ~1.5 for unit inputs (scores std ~1.5).
        nn.init.normal_(self.q_proj.weight, std=(1.5 / d_model) ** 0.5)
        nn.init.normal_(self.kv_proj.weight[:d_model], std=(1.5 / d_model) ** 0.5)

    def forward(self, y: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        b, t, d = y.shape
        s = memory.shape[1]
        q = self.q_proj(y).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        kv = self.kv_proj(memory).view(b, s, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(out)


def get_inputs():
    return [torch.randn(BATCH, TGT_LEN, D_MODEL), torch.randn(BATCH, SRC_LEN, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, HEADS]
