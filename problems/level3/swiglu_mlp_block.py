"""SwiGLU feed-forward block with RMSNorm and residual: x + W_down(SiLU(W_gate n) * W_up n), n = RMSNorm(x) (8192 tokens, D=2048, FFN 5632).

RMSNorm(x) = x / sqrt(mean(x^2) + eps) * w; the three projections are bias-free (LLaMA MLP).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 2048
D_MODEL = 2048
D_FF = 5632
EPS = 1e-6

TAGS = ["architecture", "mlp", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"BATCH": 1, "SEQ": 1}, "about": "a single token"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ": 67, "D_MODEL": 1000, "D_FF": 2700},
     "about": "a token count, model width and MLP width that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": 1, "SEQ": (50, 250), "D_MODEL": 1024, "D_FF": 2816},
     "about": "a narrower model on a token count drawn at random"},
]


class Model(nn.Module):
    """Pre-norm gated MLP sub-block of a LLaMA layer."""

    def __init__(self, d_model: int, d_ff: int, eps: float):
        super().__init__()
        self.eps = eps
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(d_model))
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.norm_weight
        return x + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, D_FF, EPS]
