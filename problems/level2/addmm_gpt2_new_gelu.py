"""GPT-2 MLP c_fc: addmm(bias, x, W) as in HF Conv1D (8 x 1024 tokens, 2048 -> 8192) + the tanh "NewGELU" written out, fp32.

h = addmm(b, x.view(-1, 2048), W) with W of shape (in, out); out = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))).
"""
import math

import torch
import torch.nn as nn

BATCH = 8
SEQ_LEN = 1024
N_EMBD = 2048
N_INNER = 8192

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_token", "set": {"BATCH": 1, "SEQ_LEN": 1}, "public": True, "about": "a single token (one row)"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 333, "N_EMBD": 1000, "N_INNER": 1500},
     "about": "a token count and matrix sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "SEQ_LEN": (1, 300), "N_EMBD": (64, 1100), "N_INNER": (64, 2100)},
     "about": "token count and matrix sizes drawn at random"},
]


class Model(nn.Module):
    """Conv1D (transposed Linear with addmm) followed by GPT-2's explicit tanh-GELU formula."""

    def __init__(self, n_embd: int, n_inner: int):
        super().__init__()
        self.n_inner = n_inner
        self.weight = nn.Parameter(torch.randn(n_embd, n_inner) * 0.02)
        self.bias = nn.Parameter(torch.randn(n_inner) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size_out = x.shape[:-1] + (self.n_inner,)
        h = torch.addmm(self.bias, x.view(-1, x.shape[-1]), self.weight).view(size_out)
        return 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, N_EMBD)]


def get_init_inputs():
    return [N_EMBD, N_INNER]
