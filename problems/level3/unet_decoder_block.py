"""U-Net decoder block: ConvTranspose 2x2/2 (256->128), concat with a (128-ch) skip, (conv3x3-BN-ReLU) x2 (256->128->128), on x (32, 256, 64, 64), skip (32, 128, 128, 128).

up = conv_transpose2d(x, k=2, s=2) (with bias); h = cat([skip, up], dim=1);
out = relu(bn2(conv2(relu(bn1(conv1(h)))))) with 3x3 convs (padding 1, no bias).
BatchNorm in training mode (batch statistics). Output: (32, 128, 128, 128).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 256
OUT_CHANNELS = 128
IMAGE = 64  # spatial size of x; the skip and the output are twice as large

TAGS = ["architecture", "unet", "compute-bound"]
WORKLOADS = [
    {"name": "odd_image", "set": {"BATCH": 2, "IMAGE": 15}, "about": "a small batch with an odd input side"},
    {"name": "narrow", "set": {"BATCH": 1, "IN_CHANNELS": 128, "OUT_CHANNELS": 64, "IMAGE": 33},
     "about": "a narrower block on a single image with an odd input side"},
]


class Model(nn.Module):
    """Learned 2x upsampling, skip concatenation, double convolution."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 2, stride=2)
        self.conv = nn.Sequential(
            nn.Conv2d(2 * out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE, IMAGE), torch.randn(BATCH, OUT_CHANNELS, 2 * IMAGE, 2 * IMAGE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
