"""Mixture-of-experts transformer FFN: LayerNorm, top-2 softmax router over 8 SwiGLU experts, weighted sum, residual (4096 tokens, D=1024).

n = LN(x); p = softmax(n W_r); the two largest p per token are renormalized to sum to 1 and weight those experts'
outputs E_e(n) = (SiLU(n W_gate_e) * (n W_up_e)) W_down_e; out = x + sum of the two weighted expert outputs.
The reference evaluates every expert densely and zeroes the unselected ones (FLOPS counts only the routed work).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 1024
D_MODEL = 1024
D_FF = 2816
EXPERTS = 8
TOP_K = 2

TAGS = ["architecture", "moe", "compute-bound"]

TOKENS = BATCH * SEQ
# Minimal work: the router plus TOP_K SwiGLU experts (three D x D_FF matmuls) per token.
FLOPS = 2 * TOKENS * D_MODEL * EXPERTS + TOP_K * 3 * 2 * TOKENS * D_MODEL * D_FF
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 1, "SEQ": 120, "D_MODEL": 512, "D_FF": 1400},
     "about": "a narrower model whose expert width is not a multiple of 128, a small token count"},
    {"name": "fewer_experts", "set": {"BATCH": 1, "SEQ": 50, "EXPERTS": 4},
     "about": "few tokens and a different number of experts"},
]


class Model(nn.Module):
    """Mixtral-style sparse MoE FFN sub-block (deterministic top-2 routing, no capacity limit, no noise)."""

    def __init__(self, d_model: int, d_ff: int, experts: int, top_k: int):
        super().__init__()
        self.top_k = top_k
        self.norm = nn.LayerNorm(d_model)
        self.router = nn.Linear(d_model, experts, bias=False)
        self.w_gate = nn.Parameter(torch.randn(experts, d_model, d_ff) * d_model ** -0.5)
        self.w_up = nn.Parameter(torch.randn(experts, d_model, d_ff) * d_model ** -0.5)
        self.w_down = nn.Parameter(torch.randn(experts, d_ff, d_model) * d_ff ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        n = self.norm(x).reshape(b * s, d)
        probs = torch.softmax(self.router(n), dim=-1)                               # (T, E)
        top_p, top_i = probs.topk(self.top_k, dim=-1)
        top_p = top_p / top_p.sum(dim=-1, keepdim=True)
        combine = torch.zeros_like(probs).scatter(1, top_i, top_p)                   # (T, E), zero if unrouted
        h = F.silu(torch.matmul(n, self.w_gate)) * torch.matmul(n, self.w_up)       # (E, T, F)
        y = torch.matmul(h, self.w_down)                                             # (E, T, D)
        out = (combine.t().unsqueeze(-1) * y).sum(dim=0)
        return x + out.view(b, s, d)


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, D_FF, EXPERTS, TOP_K]
