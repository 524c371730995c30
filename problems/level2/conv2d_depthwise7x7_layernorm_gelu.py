"""Depthwise Conv2d 7x7 (128 channels, 56x56) + channels-last LayerNorm over channels + GELU -> (256, 56, 56, 128), fp32.

The first half of a ConvNeXt block: y = gelu(layernorm_C(dwconv7x7(x).permute(0, 2, 3, 1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
CHANNELS = 128
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 97, "WIDTH": 45}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 4, "CHANNELS": 300, "HEIGHT": 23, "WIDTH": 31},
     "about": "a normalized channel count that is not a multiple of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "CHANNELS": (16, 300), "HEIGHT": (7, 40), "WIDTH": (7, 40)},
     "about": "batch, channel and image sizes drawn at random"},
]


class Model(nn.Module):
    """Depthwise 7x7 conv, permute to NHWC, LayerNorm over the channel dim (eps 1e-6), GELU."""

    def __init__(self, channels: int):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        return F.gelu(self.norm(y))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
