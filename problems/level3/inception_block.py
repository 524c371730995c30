"""Inception block (GoogLeNet 3a with BN): 1x1 / 1x1->3x3 / 1x1->5x5 / maxpool->1x1 branches concatenated, 192 -> 256 ch, on (512, 192, 28, 28).

Branches (each conv followed by BN and ReLU, convs without bias): 1x1 (64); 1x1 (96) -> 3x3 (128);
1x1 (16) -> 5x5 (32); maxpool 3x3 stride 1 -> 1x1 (32). Output: concatenation, (512, 256, 28, 28).
BatchNorm in training mode (batch statistics).
"""
import torch
import torch.nn as nn

BATCH = 512
IN_CHANNELS = 192
HEIGHT = 28
WIDTH = 28
# (1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection) output channels
BRANCH_CHANNELS = [64, 96, 128, 16, 32, 32]

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 17, "WIDTH": 23},
     "about": "a small batch of non-square maps with odd sides"},
    {"name": "other_input", "set": {"BATCH": 4, "IN_CHANNELS": 100, "HEIGHT": 14, "WIDTH": 14},
     "about": "an input channel count that is not a multiple of 32 on a small map"},
]


def conv_bn_relu(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Model(nn.Module):
    """Four parallel branches joined by channel concatenation."""

    def __init__(self, in_channels: int, branch_channels: list):
        super().__init__()
        c1, c3r, c3, c5r, c5, cp = branch_channels
        self.branch1 = conv_bn_relu(in_channels, c1, 1)
        self.branch3 = nn.Sequential(conv_bn_relu(in_channels, c3r, 1), conv_bn_relu(c3r, c3, 3))
        self.branch5 = nn.Sequential(conv_bn_relu(in_channels, c5r, 1), conv_bn_relu(c5r, c5, 5))
        self.branch_pool = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), conv_bn_relu(in_channels, cp, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.branch1(x), self.branch3(x), self.branch5(x), self.branch_pool(x)], dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, BRANCH_CHANNELS]
