"""Squeeze-and-excitation: x * sigmoid(fc2(relu(fc1(mean_hw(x))))) with 256 channels squeezed to 16, on (512, 256, 56, 56).

s[n, c] = sigmoid(W2 relu(W1 mean_{h,w} x[n, :, h, w] + b1) + b2)[c]; out = x * s[:, :, None, None].
Inputs carry a per-(sample, channel) offset so the pooled means, and so the gates, vary.
"""
import torch
import torch.nn as nn

BATCH = 512
CHANNELS = 256
REDUCTION = 16
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 3, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "other_channels", "set": {"BATCH": 5, "CHANNELS": 96, "REDUCTION": 4, "HEIGHT": 14, "WIDTH": 14},
     "about": "fewer channels and a different reduction on a small map"},
    {"name": "large_map", "set": {"BATCH": 2, "CHANNELS": 64, "HEIGHT": 113, "WIDTH": 97},
     "about": "large odd-sized maps with few channels"},
]


class Model(nn.Module):
    """Channel attention by squeeze (global average pool) and excitation (two linears)."""

    def __init__(self, channels: int, reduction: int):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(self.relu(self.fc1(s))))
        return x * s[:, :, None, None]


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + torch.randn(BATCH, CHANNELS, 1, 1)]


def get_init_inputs():
    return [CHANNELS, REDUCTION]
