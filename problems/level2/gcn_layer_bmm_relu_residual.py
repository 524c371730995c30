"""Batched dense GCN layer: Linear (16 graphs x 2048 nodes, 1024 -> 1024) then bmm with the symmetrically normalized adjacency, bias, ReLU, residual, fp32.

A' = D^-1/2 (A + I) D^-1/2; out = relu(A' @ (x @ W^T) + b) + x, A a (16, 2048, 2048) 0/1 matrix with ~1% density.
"""
import torch
import torch.nn as nn

BATCH = 16
NUM_NODES = 2048
FEATURES = 1024

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_graph", "set": {"BATCH": 1, "NUM_NODES": 1024, "FEATURES": 512},
     "public": True, "about": "a batch of one graph"},
    {"name": "unaligned", "set": {"BATCH": 3, "NUM_NODES": 999, "FEATURES": 257},
     "about": "node and feature counts that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "NUM_NODES": (100, 1200), "FEATURES": (32, 600)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Kipf-Welling graph convolution on dense batched adjacency matrices, with a residual."""

    def __init__(self, features: int):
        super().__init__()
        self.fc = nn.Linear(features, features, bias=False)
        self.bias = nn.Parameter(0.2 * torch.randn(features))
        with torch.no_grad():
            self.fc.weight.mul_(3.0)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        a = adj + torch.eye(adj.shape[-1], device=adj.device, dtype=adj.dtype)
        d = a.sum(dim=-1).rsqrt()
        a = d.unsqueeze(-1) * a * d.unsqueeze(-2)
        h = torch.bmm(a, self.fc(x)) + self.bias
        return torch.relu(h) + x


def get_inputs():
    x = torch.randn(BATCH, NUM_NODES, FEATURES)
    adj = (torch.rand(BATCH, NUM_NODES, NUM_NODES) < 0.01).float()
    return [x, adj]


def get_init_inputs():
    return [FEATURES]
