"""DiT-style adaptive LayerNorm: Linear (16 x 512 tokens, 4096 -> 4096) + LayerNorm without affine + per-sample scale/shift modulation, fp32.

y = layer_norm(x @ W^T + b, eps 1e-6); out = y * (1 + scale[:, None]) + shift[:, None].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
TOKENS = 512
IN_FEATURES = 4096
HIDDEN = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "TOKENS": 128},
     "public": True, "about": "a batch of one short sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "TOKENS": 257, "IN_FEATURES": 1000, "HIDDEN": 1001},
     "about": "token and feature counts that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 6), "TOKENS": (1, 300), "IN_FEATURES": (64, 1000), "HIDDEN": (64, 1500)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Projection, parameter-free LayerNorm, modulation by conditioning-derived (B, C) shift and scale."""

    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden)

    def forward(self, x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        y = F.layer_norm(self.fc(x), (self.fc.out_features,), eps=1e-6)
        return y * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def get_inputs():
    x = torch.randn(BATCH, TOKENS, IN_FEATURES)
    shift = 0.5 * torch.randn(BATCH, HIDDEN)
    scale = 0.5 * torch.randn(BATCH, HIDDEN)
    return [x, shift, scale]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN]
