"""Conv2d 3x3 (64->128 channels, 256x256) + subtract 0.5 + HardSwish + MaxPool2d 2x2 + Mish, fp32.

y = mish(maxpool2x2(hardswish(conv2d(x, W, b) - 0.5))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
SUBTRACT = 0.5
POOL = 2

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 97, "WIDTH": 131}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 19, "OUT_CHANNELS": 45, "HEIGHT": 41, "WIDTH": 70},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 5), "HEIGHT": (9, 60), "WIDTH": (9, 60)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, constant shift, HardSwish, max pooling, Mish."""

    def __init__(self, in_channels: int, out_channels: int, subtract: float, pool: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.subtract = subtract
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.hardswish(self.conv(x) - self.subtract)
        return F.mish(F.max_pool2d(y, self.pool))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, SUBTRACT, POOL]
