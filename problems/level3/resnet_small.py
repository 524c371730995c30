"""Small ResNet: 7x7/2 stem + maxpool, stage 1 (2 basic blocks, 64 ch), stage 2 (2 basic blocks, 128 ch, stride 2), avgpool + FC, on (128, 3, 224, 224).

stem: conv7x7(3->64, stride 2) BN ReLU, maxpool 3x3 stride 2 -> 56x56.
stage 1: two basic blocks at 64 channels; stage 2: two basic blocks at 128 channels, the first with
stride 2 and a 1x1 conv + BN projection shortcut -> 28x28. Then global average pool and Linear(128 -> 1000).
BatchNorm in training mode (batch statistics). Output: (128, 1000) logits.
"""
import torch
import torch.nn as nn

BATCH = 128
IN_CHANNELS = 3
IMAGE = 224
NUM_CLASSES = 1000

TAGS = ["architecture", "cnn", "compute-bound"]
WORKLOADS = [
    {"name": "small_image", "set": {"BATCH": 2, "IMAGE": 100}, "about": "a small batch of smaller images"},
    {"name": "odd_image", "set": {"BATCH": 3, "IMAGE": 65, "NUM_CLASSES": 10},
     "about": "images with an odd side and few classes"},
]


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class Model(nn.Module):
    """ResNet stem, two stages of basic blocks, classifier."""

    def __init__(self, in_channels: int, num_classes: int):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        self.stage1 = nn.Sequential(BasicBlock(64, 64, 1), BasicBlock(64, 64, 1))
        self.stage2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stage2(self.stage1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
