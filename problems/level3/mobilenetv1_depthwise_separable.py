"""MobileNetV1 stack: 5 depthwise-separable blocks (dw3x3-BN-ReLU, pw1x1-BN-ReLU), 32->64->128->128->256->256 ch, on (128, 32, 112, 112).

Each block: depthwise 3x3 conv (stride s, padding 1) BN ReLU, then pointwise 1x1 conv BN ReLU; convs
without bias; BatchNorm in training mode (batch statistics). Strides 1, 2, 1, 2, 1 (112 -> 56 -> 28).
Output: (128, 256, 28, 28).
"""
import torch
import torch.nn as nn

BATCH = 128
IN_CHANNELS = 32
IMAGE = 112
# (output channels, stride) of each depthwise-separable block
BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1)]

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_image", "set": {"BATCH": 2, "IMAGE": 57}, "about": "a small batch of images with an odd side"},
    {"name": "other_input", "set": {"BATCH": 1, "IN_CHANNELS": 24, "IMAGE": 100},
     "about": "a single image with fewer input channels and a side that is not a multiple of 8"},
]


class Model(nn.Module):
    """Depthwise-separable convolution stack."""

    def __init__(self, in_channels: int, blocks: list):
        super().__init__()
        layers = []
        cin = in_channels
        for cout, stride in blocks:
            layers += [
                nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin, bias=False),
                nn.BatchNorm2d(cin),
                nn.ReLU(),
                nn.Conv2d(cin, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
            ]
            cin = cout
        self.features = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, BLOCKS]
