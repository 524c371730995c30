"""Small GPT language model: token + position embeddings, 4 causal GPT-2 blocks, final LN and LM head to 8192 logits (B=8, S=1024, D=768).

logits = LN_f(blocks(wte[tokens] + wpe[0..S-1])) W_head^T, each block x + attn(LN(x)), x + MLP(LN(x)) with tanh GELU.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
VOCAB = 8192
D_MODEL = 768
HEADS = 12
LAYERS = 4

TAGS = ["architecture", "transformer", "compute-bound"]
WORKLOADS = [
    {"name": "ragged", "set": {"BATCH": 1, "SEQ": 333, "VOCAB": 5001, "D_MODEL": 384, "HEADS": 6, "LAYERS": 2},
     "about": "a narrower, shallower model; a ragged sequence length and a vocabulary size not a multiple of 128"},
    {"name": "short", "set": {"BATCH": 1, "SEQ": 50}, "about": "a single short sequence"},
]


class Block(nn.Module):
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


class Model(nn.Module):
    """GPT-2 style decoder-only LM (untied LM head) returning logits for every position."""

    def __init__(self, vocab: int, max_seq: int, d_model: int, heads: int, layers: int):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(max_seq, d_model)
        self.blocks = nn.ModuleList([Block(d_model, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ))]


def get_init_inputs():
    return [VOCAB, SEQ, D_MODEL, HEADS, LAYERS]
