"""Conv2d 3x3 (96->128 channels, 256x256) + GroupNorm (32 groups, affine) + exact GELU, fp32.

y = gelu(groupnorm(conv2d(x, W, b)))  with mean/var per (sample, group of 4 channels).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 96
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
GROUPS = 32

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 67, "WIDTH": 99}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_groups", "set": {"BATCH": 3, "IN_CHANNELS": 21, "OUT_CHANNELS": 60, "GROUPS": 12, "HEIGHT": 37,
                                   "WIDTH": 50},
     "about": "channel counts that are not multiples of 32, groups of an odd channel count, a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 45), "WIDTH": (5, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv + GroupNorm + GELU; the affine GroupNorm parameters are randomized so they matter."""

    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
