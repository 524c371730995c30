"""Grouped Conv2d 3x3 (256 channels, 8 groups, 56x56, no bias) + BatchNorm2d (training) + ReLU + channel shuffle, fp32.

ShuffleNet/ResNeXt style: y = shuffle(relu(batchnorm(grouped_conv(x)))), shuffle = view(N, G, C/G, H, W).transpose(1, 2).
"""
import torch
import torch.nn as nn

BATCH = 256
CHANNELS = 256
GROUPS = 8
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 57, "WIDTH": 97}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_groups", "set": {"BATCH": 4, "CHANNELS": 120, "GROUPS": 5, "HEIGHT": 23, "WIDTH": 30},
     "about": "a channel count and a group width that are not multiples of 32, an odd group count, a small image"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "HEIGHT": (5, 40), "WIDTH": (5, 40)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Grouped conv, batch-statistics BatchNorm, ReLU, then the channel shuffle that mixes the groups."""

    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.weight.copy_(0.5 + torch.rand(channels))
            self.bn.bias.copy_(0.3 * torch.randn(channels))
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        n, c, h, w = y.shape
        y = y.view(n, self.groups, c // self.groups, h, w).transpose(1, 2)
        return y.reshape(n, c, h, w)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, GROUPS]
