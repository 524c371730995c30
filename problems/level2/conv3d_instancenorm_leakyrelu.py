"""Conv3d 3x3x3 (32->32 channels, 128^3 patches) + affine InstanceNorm3d + LeakyReLU(0.01), fp32.

The nnU-Net convolution block: y = leaky_relu(instancenorm(conv3d(x, W, b)), 0.01).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CHANNELS = 32
SIZE = 128

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "SIZE": 29}, "public": True,
     "about": "a batch of one volume whose side is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 2, "CHANNELS": 20, "SIZE": 21},
     "about": "a channel count and a volume side that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "SIZE": (4, 24)}, "about": "batch and volume side drawn at random"},
]


class Model(nn.Module):
    """Same-size 3-D conv, instance normalization with learned affine, leaky ReLU."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, 3, padding=1)
        self.norm = nn.InstanceNorm3d(channels, eps=1e-5, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(self.norm(self.conv(x)), 0.01)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS]
