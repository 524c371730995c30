"""Conv2d 3x3 (128->128 channels, 256x256, no bias) + scaled per-pixel noise + bias + LeakyReLU(0.2) * sqrt(2), fp32.

A StyleGAN2 synthesis layer (without modulation): y = sqrt(2) * leaky_relu(conv2d(x) + strength * noise + bias[c], 0.2),
noise is a (N, 1, H, W) input broadcast over channels.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 128
HEIGHT = 256
WIDTH = 256

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 61, "WIDTH": 77}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "CHANNELS": 45, "HEIGHT": 41, "WIDTH": 70},
     "about": "a channel count that is not a multiple of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 45), "WIDTH": (5, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, noise injection with a learned strength, bias, leaky ReLU with StyleGAN's sqrt(2) gain."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.noise_strength = nn.Parameter(torch.tensor(0.1))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.gain = math.sqrt(2.0)

    def forward(self, x: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        y = self.conv(x) + noise * self.noise_strength + self.bias[None, :, None, None]
        return F.leaky_relu(y, 0.2) * self.gain


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH), torch.randn(BATCH, 1, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
