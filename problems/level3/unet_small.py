"""Small U-Net: 2 encoder levels (32, 64 ch), a 128-ch bottleneck, 2 decoder levels with skips, 1x1 head to 2 classes, on (32, 3, 256, 256).

double_conv = (conv3x3-BN-ReLU) x2 (no bias). enc1 = dc(3->32) @256, enc2 = dc(32->64) @128 after maxpool,
bottleneck = dc(64->128) @64 after maxpool; dec2 = dc(cat(enc2, convT2x2(128->64)) 128->64) @128,
dec1 = dc(cat(enc1, convT2x2(64->32)) 64->32) @256; out = conv1x1(32->2) with bias.
BatchNorm in training mode (batch statistics). Output: (32, 2, 256, 256) logits.
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 3
NUM_CLASSES = 2
IMAGE = 256
BASE = 32

TAGS = ["architecture", "unet", "compute-bound"]
WORKLOADS = [
    {"name": "small_image", "set": {"BATCH": 2, "IMAGE": 100},
     "about": "a small batch of smaller images whose side is not a multiple of 8"},
    {"name": "narrow", "set": {"BATCH": 1, "IN_CHANNELS": 1, "NUM_CLASSES": 3, "IMAGE": 68, "BASE": 16},
     "about": "a single one-channel image through a narrower network with more classes"},
]


def double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class Model(nn.Module):
    """Two-level U-Net."""

    def __init__(self, in_channels: int, num_classes: int, base: int):
        super().__init__()
        self.enc1 = double_conv(in_channels, base)
        self.enc2 = double_conv(base, 2 * base)
        self.bottleneck = double_conv(2 * base, 4 * base)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * base, 2 * base, 2, stride=2)
        self.dec2 = double_conv(4 * base, 2 * base)
        self.up1 = nn.ConvTranspose2d(2 * base, base, 2, stride=2)
        self.dec1 = double_conv(2 * base, base)
        self.head = nn.Conv2d(base, num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([e2, self.up2(b)], dim=1))
        d1 = self.dec1(torch.cat([e1, self.up1(d2)], dim=1))
        return self.head(d1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES, BASE]
