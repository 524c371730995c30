"""ResNet basic block (3x3 conv-BN-ReLU, 3x3 conv-BN, identity add, ReLU), 128 channels, on (128, 128, 56, 56).

out = relu(bn2(conv2(relu(bn1(conv1(x))))) + x); convs are 3x3, stride 1, padding 1, no bias;
BatchNorm in training mode (batch statistics).
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 128
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "other_channels", "set": {"BATCH": 4, "CHANNELS": 96, "HEIGHT": 15, "WIDTH": 15},
     "about": "a different channel count on a small odd-sized map"},
]


class Model(nn.Module):
    """Basic residual block with an identity shortcut."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
