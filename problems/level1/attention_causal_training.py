"""Causal scaled dot-product attention, fp32 q, k, v of shape (8, 16, 1024, 64), trained: forward and backward.

out[b, h, i] = sum over j <= i of softmax_j(q_i . k_j / sqrt(64)) v_j (F.scaled_dot_product_attention with
is_causal=True). The backward gives the gradients of q, k and v through the same masked attention weights (key j
gets gradient only from queries i >= j). q and k are drawn at half the unit scale, so the scores stay moderate.
Judged: the output and the gradients of q, k and v, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
HEADS = 16
SEQ = 1024
HEAD_DIM = 64

TAGS = ["attention", "compute-bound", "training"]
TRAINING = True
# the minimal work of a forward and a backward: the forward's q.k and p.v (two products) and the backward's dv, dp,
# dq and dk (four), each only over the S(S+1)/2 unmasked (i, j) pairs, 2 * HEAD_DIM FLOPs a pair (the FLOP counter
# would count the full S x S products, twice this)
FLOPS = 6 * 2 * BATCH * HEADS * HEAD_DIM * SEQ * (SEQ + 1) // 2
WORKLOADS = [
    {"name": "one_head", "set": {"BATCH": 1, "HEADS": 1}, "public": True, "about": "a single batch and head"},
    {"name": "unaligned_seq", "set": {"BATCH": 2, "HEADS": 3, "SEQ": 1000},
     "about": "a sequence length that is not a multiple of 32"},
    {"name": "wide_heads", "set": {"BATCH": 1, "HEADS": 4, "SEQ": 777, "HEAD_DIM": 128},
     "about": "a larger head dim, with a sequence length that is not a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "HEADS": (1, 4), "SEQ": (100, 1200)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Causal multi-head attention core: query i attends to keys 0..i; no dropout, default scale 1/sqrt(head_dim)."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape) * 0.5, torch.randn(shape) * 0.5, torch.randn(shape)]


def get_init_inputs():
    return []
