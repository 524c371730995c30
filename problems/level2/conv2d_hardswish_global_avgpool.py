"""Conv2d 3x3 (128->256 channels, 128x128) + HardSwish + global average pool -> (64, 256) features, fp32.

The MobileNetV3 classifier-head pattern: y[n, c] = mean over (h, w) of hardswish(conv2d(x, W, b))[n, c, h, w].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 256
HEIGHT = 128
WIDTH = 128

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 45, "WIDTH": 61}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 5, "IN_CHANNELS": 30, "OUT_CHANNELS": 100, "HEIGHT": 33, "WIDTH": 19},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 5), "HEIGHT": (3, 25), "WIDTH": (3, 25)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, HardSwish, then adaptive average pooling to 1x1, flattened to (N, C)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.hardswish(self.conv(x))
        return F.adaptive_avg_pool2d(y, 1).flatten(1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
