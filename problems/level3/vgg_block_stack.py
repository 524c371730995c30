"""VGG stack: 3 stages of [conv3x3+ReLU] x2 + maxpool2 (3->64->64, 64->128->128, 128->256->256) on (32, 3, 224, 224).

Each conv is 3x3, padding 1, with bias, followed by ReLU; each stage ends with 2x2 max pooling
(224 -> 112 -> 56 -> 28). No BatchNorm: conv weights use Kaiming-normal init (ReLU gain), biases zero,
so activations keep their scale. Output: (32, 256, 28, 28).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 3
IMAGE = 224
STAGE_CHANNELS = [64, 128, 256]

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "small_image", "set": {"BATCH": 1, "IMAGE": 100}, "about": "a single smaller image"},
    {"name": "odd_image", "set": {"BATCH": 2, "IMAGE": 61},
     "about": "images with an odd side (each pooling drops a row and a column)"},
]


class Model(nn.Module):
    """VGG-style convolution stages."""

    def __init__(self, in_channels: int, stage_channels: list):
        super().__init__()
        layers = []
        cin = in_channels
        for cout in stage_channels:
            for _ in range(2):
                conv = nn.Conv2d(cin, cout, 3, padding=1)
                nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
                nn.init.zeros_(conv.bias)
                layers += [conv, nn.ReLU()]
                cin = cout
            layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, STAGE_CHANNELS]
