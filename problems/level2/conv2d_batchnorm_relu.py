"""Conv2d 3x3 (64->128 channels, 256x256) + BatchNorm2d (training-mode batch statistics) + ReLU, fp32.

y = relu(batchnorm(conv2d(x, W, b)))  with per-channel mean/var over (N, H, W) of the conv output.
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL = 3

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 97, "WIDTH": 131}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 19, "OUT_CHANNELS": 45, "HEIGHT": 40, "WIDTH": 72},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (2, 5), "HEIGHT": (17, 70), "WIDTH": (17, 70)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """The classic VGG/ResNet Conv-BN-ReLU block; BatchNorm uses batch statistics (module in training mode)."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
