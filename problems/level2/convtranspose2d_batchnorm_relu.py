"""ConvTranspose2d 4x4/s2 (256->128 channels, 64x64 -> 128x128, no bias) + BatchNorm2d (training) + ReLU, fp32.

A DCGAN generator block: y = relu(batchnorm(conv_transpose2d(x, W, stride=2, padding=1))).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 256
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 37, "WIDTH": 45}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 40, "OUT_CHANNELS": 20, "HEIGHT": 21, "WIDTH": 30},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (2, 20), "WIDTH": (2, 20)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling transposed conv, batch-statistics BatchNorm, ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
