"""Conv2d 3x3 (128->128 channels, 256x256) + per-sample timestep-embedding add + GroupNorm (32 groups) + SiLU, fp32.

From a diffusion U-Net ResBlock: y = silu(groupnorm(conv2d(x, W, b) + emb[:, :, None, None])).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 24
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
GROUPS = 32

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 61, "WIDTH": 77}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_groups", "set": {"BATCH": 3, "CHANNELS": 120, "GROUPS": 40, "HEIGHT": 33, "WIDTH": 50},
     "about": "a channel count that is not a multiple of 32, more groups of fewer channels, a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "HEIGHT": (8, 45), "WIDTH": (8, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, broadcast add of a (N, C) embedding, GroupNorm, SiLU."""

    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.conv(x) + emb[:, :, None, None]
        return F.silu(self.norm(h))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH), torch.randn(BATCH, CHANNELS)]


def get_init_inputs():
    return [CHANNELS, GROUPS]
