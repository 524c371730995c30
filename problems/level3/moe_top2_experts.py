"""Mixture of experts: softmax router with top-2 gating over 8 GELU-MLP experts (1024->2048->1024), on (4, 2048, 1024) tokens.

p = softmax(x @ W_r^T + b_r) over 8 experts; (v, idx) = top-2 of p per token; w = v / sum(v);
out[t] = sum over the two chosen e of w_e * expert_e(x[t]), expert_e(x) = fc2_e(gelu(fc1_e(x))).
The reference computes every expert on every token and weights it by a combine matrix that is zero for
unchosen experts (4x the needed work); only the chosen experts' work is required.
"""
import torch
import torch.nn as nn

BATCH = 4
SEQ_LEN = 2048
DIM = 1024
HIDDEN = 2048
NUM_EXPERTS = 8
TOP_K = 2

TAGS = ["architecture", "moe", "compute-bound"]
# minimal work: 2 experts per token (2 * 2 * T * DIM * HIDDEN * 2) plus the router (2 * T * DIM * 8), T = 8192
FLOPS = 137573171200
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 1, "SEQ_LEN": 200, "DIM": 512, "HIDDEN": 1000},
     "about": "a token count and expert width that are not multiples of 128, a narrower model"},
    {"name": "fewer_experts", "set": {"BATCH": 1, "SEQ_LEN": 60, "NUM_EXPERTS": 6},
     "about": "few tokens and a different number of experts"},
]


class Expert(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Model(nn.Module):
    """Top-k routed MoE layer, computed densely with per-expert combine weights."""

    def __init__(self, dim: int, hidden: int, num_experts: int, top_k: int):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(dim, num_experts)
        self.experts = nn.ModuleList(Expert(dim, hidden) for _ in range(num_experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = torch.softmax(self.router(x), dim=-1)
        top_v, top_i = probs.topk(self.top_k, dim=-1)
        top_v = top_v / top_v.sum(dim=-1, keepdim=True)
        combine = torch.zeros_like(probs).scatter(1, top_i, top_v)           # (tokens, experts), zero if unchosen
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = out + combine[:, e:e + 1] * expert(x)
        return out.reshape(shape)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN, NUM_EXPERTS, TOP_K]
