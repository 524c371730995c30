"""MobileNetV2 inverted residual: 1x1 expand (24->144) BN ReLU6, 3x3 depthwise BN ReLU6, 1x1 project (144->24) BN, + x, on (256, 24, 56, 56).

out = x + bn3(pw2(relu6(bn2(dw(relu6(bn1(pw1(x)))))))); expansion 6, stride 1, convs without bias;
BatchNorm in training mode (batch statistics).
"""
import torch
import torch.nn as nn

BATCH = 256
CHANNELS = 24
EXPANSION = 6
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "wide_small_map", "set": {"BATCH": 4, "CHANNELS": 96, "HEIGHT": 14, "WIDTH": 14},
     "about": "more channels on a small map"},
]


class Model(nn.Module):
    """Inverted residual block with a linear bottleneck."""

    def __init__(self, channels: int, expansion: int):
        super().__init__()
        hidden = channels * expansion
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPANSION]
