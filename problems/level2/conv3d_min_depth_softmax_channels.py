"""Conv3d 3x3x3 (32->64 channels, 16x128x128) + min over depth + softmax over channels -> (8, 64, 126, 126), fp32.

y = softmax_c(min over d of conv3d(x, W, b)[:, :, d]), valid convolution (no padding).
"""
import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 16
HEIGHT = 128
WIDTH = 128

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_clip", "set": {"BATCH": 1, "DEPTH": 5, "HEIGHT": 61, "WIDTH": 47}, "public": True,
     "about": "a batch of one clip whose frame count, height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 7, "OUT_CHANNELS": 45, "DEPTH": 4, "HEIGHT": 30,
                                     "WIDTH": 21},
     "about": "channel counts that are not multiples of 32 and a small non-cubic volume"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "DEPTH": (3, 8), "HEIGHT": (3, 30), "WIDTH": (3, 30)},
     "about": "batch and volume sizes drawn at random"},
]


class Model(nn.Module):
    """Valid 3-D conv, reduction by minimum along depth, channel softmax of the resulting 2-D maps."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.amin(self.conv(x), dim=2)
        return torch.softmax(y, dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
