"""Conv2d 3x3 (64->256 channels, 128x128) + PixelShuffle x2 (-> 64 channels, 256x256) + per-channel PReLU, fp32.

The SRGAN/ESPCN upsampling block: y = prelu(pixel_shuffle(conv2d(x, W, b), 2)).
"""
import torch
import torch.nn as nn

BATCH = 48
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
UPSCALE = 2

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 67, "WIDTH": 75}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_upscale", "set": {"BATCH": 3, "CHANNELS": 20, "UPSCALE": 3, "HEIGHT": 33, "WIDTH": 45},
     "about": "a channel count that is not a multiple of 32, another upscale factor, a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 40), "WIDTH": (5, 40)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv to C*r^2 channels, sub-pixel shuffle to r-times resolution, PReLU with a slope per channel."""

    def __init__(self, channels: int, upscale: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * upscale * upscale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)
        self.prelu = nn.PReLU(channels)
        with torch.no_grad():
            self.prelu.weight.copy_(0.25 * torch.rand(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.prelu(self.shuffle(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, UPSCALE]
