"""ResNet bottleneck block (1x1 256->64, 3x3 64->64, 1x1 64->256, each with BN; identity add; ReLU) on (128, 256, 56, 56).

out = relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + x); convs have no bias;
BatchNorm in training mode (batch statistics).
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 256
WIDTH_CHANNELS = 64
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "wide_small_map", "set": {"BATCH": 2, "CHANNELS": 512, "WIDTH_CHANNELS": 128, "HEIGHT": 14, "WIDTH": 14},
     "about": "a wider block on a small map"},
]


class Model(nn.Module):
    """Bottleneck residual block (expansion 4) with an identity shortcut."""

    def __init__(self, channels: int, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, WIDTH_CHANNELS]
