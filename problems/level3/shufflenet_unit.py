"""ShuffleNetV2 unit (stride 1): split channels, branch 1x1-BN-ReLU, 3x3 depthwise-BN, 1x1-BN-ReLU, concat, channel shuffle (2 groups), on (256, 176, 56, 56).

x1, x2 = x.chunk(2, dim=1); y = cat(x1, branch(x2)); out = channel_shuffle(y, 2), i.e.
y.view(N, 2, C/2, H, W).transpose(1, 2).reshape(N, C, H, W). Convs without bias; BatchNorm in training mode.
"""
import torch
import torch.nn as nn

BATCH = 256
CHANNELS = 176
HEIGHT = 56
WIDTH = 56
GROUPS = 2

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "other_channels", "set": {"BATCH": 4, "CHANNELS": 116, "HEIGHT": 28, "WIDTH": 28},
     "about": "a channel count whose half is not a multiple of 8"},
]


class Model(nn.Module):
    """ShuffleNetV2 basic unit."""

    def __init__(self, channels: int, groups: int):
        super().__init__()
        half = channels // 2
        self.groups = groups
        self.branch = nn.Sequential(
            nn.Conv2d(half, half, 1, bias=False),
            nn.BatchNorm2d(half),
            nn.ReLU(),
            nn.Conv2d(half, half, 3, padding=1, groups=half, bias=False),
            nn.BatchNorm2d(half),
            nn.Conv2d(half, half, 1, bias=False),
            nn.BatchNorm2d(half),
            nn.ReLU(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2 = x.chunk(2, dim=1)
        y = torch.cat([x1, self.branch(x2)], dim=1)
        n, c, h, w = y.shape
        return y.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, GROUPS]
