"""VAE encoder head: Linear (8192 x 4096 -> 2 x 2048) split into mu and log-variance + per-sample KL to N(0, I); returns (mu, kl), fp32.

mu, logvar = split(x @ W^T + b); kl[i] = -0.5 * sum_j (1 + logvar - mu^2 - exp(logvar))[i, j].
"""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
LATENT = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"BATCH": 7}, "public": True, "about": "a batch of a handful of rows"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "LATENT": 501},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 4099, "IN_FEATURES": 257, "LATENT": 67},
     "about": "many rows with few input features and latents, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (5, 700), "IN_FEATURES": (64, 1500), "LATENT": (32, 700)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Gaussian posterior parameters and their KL divergence to the standard normal prior, per sample."""

    def __init__(self, in_features: int, latent: int):
        super().__init__()
        self.fc = nn.Linear(in_features, 2 * latent)

    def forward(self, x: torch.Tensor):
        mu, logvar = self.fc(x).chunk(2, dim=-1)
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=-1)
        return mu, kl


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, LATENT]
