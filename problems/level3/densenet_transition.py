"""DenseNet transition layer: BN-ReLU-conv1x1 (256->128)-avgpool 2x2 on (256, 256, 56, 56).

out = avg_pool2d(conv1x1(relu(bn(x))), 2); BatchNorm in training mode (batch statistics), conv without
bias. Output: (256, 128, 28, 28).
"""
import torch
import torch.nn as nn

BATCH = 256
IN_CHANNELS = 256
OUT_CHANNELS = 128
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 57, "WIDTH": 31},
     "about": "a small batch of non-square maps with odd sides (pooling drops the last row and column)"},
    {"name": "other_channels", "set": {"BATCH": 4, "IN_CHANNELS": 200, "OUT_CHANNELS": 100, "HEIGHT": 14, "WIDTH": 14},
     "about": "channel counts that are not multiples of 32 on a small map"},
]


class Model(nn.Module):
    """Channel compression and 2x spatial downsampling between dense blocks."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.norm = nn.BatchNorm2d(in_channels)
        self.relu = nn.ReLU()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.pool = nn.AvgPool2d(2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(self.relu(self.norm(x))))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH) + 1]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
