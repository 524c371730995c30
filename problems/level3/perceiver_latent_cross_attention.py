"""Perceiver block: 512 learned latents cross-attend over 8192 input tokens, then MLP and one latent self-attention layer (B=8, D=1024).

z = latents + W_o attn(q = LN_q(latents), k, v = LN_kv(inputs)); z = z + MLP(LN(z));
z = z + SelfAttn(LN(z)); out = z + MLP(LN(z)). Inputs have C = 256 channels, projected to D by W_k, W_v; 8 heads of 128.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
INPUT_LEN = 8192
INPUT_DIM = 256
NUM_LATENTS = 512
D_MODEL = 1024
HEADS = 8

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "few_latents", "set": {"BATCH": 1, "INPUT_LEN": 1000, "NUM_LATENTS": 50},
     "about": "one input of ragged length and a latent count that is not a multiple of 32"},
    {"name": "narrow", "set": {"BATCH": 2, "INPUT_LEN": 777, "INPUT_DIM": 200, "NUM_LATENTS": 64, "D_MODEL": 768,
                               "HEADS": 12},
     "about": "a narrower model with smaller heads, input channels that are not a multiple of 32"},
]


class Attention(nn.Module):
    def __init__(self, d_model: int, kv_dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(kv_dim, d_model)
        self.v_proj = nn.Linear(kv_dim, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        m = context.shape[1]
        q = self.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(context).view(b, m, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(context).view(b, m, self.heads, self.head_dim).transpose(1, 2)
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(torch.matmul(attn, v).transpose(1, 2).reshape(b, n, d))


class MLP(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(self.norm(x))))


class Model(nn.Module):
    """Perceiver encoder: one cross-attention block into the latent array and one latent self-attention block."""

    def __init__(self, num_latents: int, d_model: int, input_dim: int, heads: int):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, d_model))
        self.cross_q_norm = nn.LayerNorm(d_model)
        self.cross_kv_norm = nn.LayerNorm(input_dim)
        self.cross_attn = Attention(d_model, input_dim, heads)
        self.cross_mlp = MLP(d_model)
        self.self_norm = nn.LayerNorm(d_model)
        self.self_attn = Attention(d_model, d_model, heads)
        self.self_mlp = MLP(d_model)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        b = inputs.shape[0]
        z = self.latents.unsqueeze(0).repeat(b, 1, 1)  # a copy, not a view of the parameter
        z = z + self.cross_attn(self.cross_q_norm(z), self.cross_kv_norm(inputs))
        z = z + self.cross_mlp(z)
        h = self.self_norm(z)
        z = z + self.self_attn(h, h)
        return z + self.self_mlp(z)


def get_inputs():
    return [torch.randn(BATCH, INPUT_LEN, INPUT_DIM)]


def get_init_inputs():
    return [NUM_LATENTS, D_MODEL, INPUT_DIM, HEADS]
