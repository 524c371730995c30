"""ConvTranspose2d 4x4/s2 (256->64 channels, 128x128 -> 256x256) + GELU + GroupNorm (8 groups), fp32.

y = groupnorm(gelu(conv_transpose2d(x, W, b, stride=2, padding=1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 256
OUT_CHANNELS = 64
HEIGHT = 128
WIDTH = 128
GROUPS = 8

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 45, "WIDTH": 61}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_groups", "set": {"BATCH": 3, "IN_CHANNELS": 40, "OUT_CHANNELS": 30, "GROUPS": 10, "HEIGHT": 21,
                                   "WIDTH": 30},
     "about": "channel counts that are not multiples of 32, groups of an odd channel count, a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (2, 25), "WIDTH": (2, 25)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling transposed conv, GELU, then GroupNorm with learned affine."""

    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(F.gelu(self.deconv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
