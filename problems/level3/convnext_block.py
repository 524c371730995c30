"""ConvNeXt block: 7x7 depthwise conv, LayerNorm (channels-last), Linear 96->384, GELU, Linear 384->96, layer scale, + x, on (128, 96, 56, 56).

h = dwconv7x7(x) (with bias); h = h.permute(0, 2, 3, 1); h = fc2(gelu(fc1(LayerNorm(h))));
out = x + (gamma * h).permute(0, 3, 1, 2). gamma (per channel) is drawn in [0.5, 1) rather than
ConvNeXt's 1e-6 init, so the block is not an identity.
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 96
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "wide_small_map", "set": {"BATCH": 1, "CHANNELS": 192, "HEIGHT": 14, "WIDTH": 14},
     "about": "more channels on a small map, batch of one"},
]


class Model(nn.Module):
    """ConvNeXt block (stochastic depth off)."""

    def __init__(self, channels: int):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.fc1 = nn.Linear(channels, 4 * channels)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(0.5 + 0.5 * torch.rand(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.dwconv(x).permute(0, 2, 3, 1)
        h = self.fc2(self.act(self.fc1(self.norm(h))))
        return x + (self.gamma * h).permute(0, 3, 1, 2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
