"""U-Net encoder block: (conv3x3-BN-ReLU) x2 (64->128->128) then maxpool 2x2, on (32, 64, 128, 128); returns (skip, pooled).

skip = relu(bn2(conv2(relu(bn1(conv1(x)))))) with 3x3 convs (padding 1, no bias); pooled = max_pool2d(skip, 2).
BatchNorm in training mode (batch statistics). Outputs: (32, 128, 128, 128) and (32, 128, 64, 64).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
IMAGE = 128

TAGS = ["architecture", "unet", "compute-bound"]
WORKLOADS = [
    {"name": "odd_image", "set": {"BATCH": 2, "IMAGE": 45},
     "about": "a small batch of images with an odd side (pooling drops the last row and column)"},
    {"name": "first_level", "set": {"BATCH": 1, "IN_CHANNELS": 3, "OUT_CHANNELS": 32, "IMAGE": 100},
     "about": "a single RGB image through a narrow first-level block"},
]


class Model(nn.Module):
    """Double convolution then 2x downsampling; the pre-pool features are the skip connection."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor):
        skip = self.conv(x)
        return skip, self.pool(skip)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
