"""DenseNet dense block: 6 layers of BN-ReLU-conv1x1(->128)-BN-ReLU-conv3x3(->32), each concatenated onto its input, on (64, 64, 56, 56).

Layer i sees the concatenation of the block input and all earlier layers' outputs (64 + 32 i channels)
and produces 32 new channels (growth rate 32, bottleneck 4 x 32); the block returns the concatenation of
all (64 + 6 x 32 = 256 channels). BatchNorm in training mode (batch statistics). Output: (64, 256, 56, 56).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 64
GROWTH = 32
LAYERS = 6
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "other_growth", "set": {"BATCH": 3, "IN_CHANNELS": 40, "GROWTH": 12, "LAYERS": 4, "HEIGHT": 17,
                                     "WIDTH": 17},
     "about": "a different input width, growth rate and depth on an odd-sized map"},
]


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, 4 * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv1(self.relu(self.norm1(x)))
        return self.conv2(self.relu(self.norm2(out)))


class Model(nn.Module):
    """Dense block with concatenated feature reuse."""

    def __init__(self, in_channels: int, growth: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(in_channels + i * growth, growth) for i in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = x
        for layer in self.layers:
            features = torch.cat([features, layer(features)], dim=1)
        return features


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, GROWTH, LAYERS]
