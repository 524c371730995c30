"""Strided Conv2d 3x3/s2 (128->256 channels, 256x256 -> 128x128, no bias) + BatchNorm2d (training) + SiLU, fp32.

The YOLOv5/EfficientNet downsampling block: y = silu(batchnorm(conv2d(x, W, stride=2, padding=1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 256
HEIGHT = 256
WIDTH = 256

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 75, "WIDTH": 101}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 20, "OUT_CHANNELS": 72, "HEIGHT": 45, "WIDTH": 30},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (9, 50), "WIDTH": (9, 50)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv (bias-free, as before a BatchNorm) with stride 2, batch-statistics BatchNorm, SiLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-3, momentum=0.03)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
