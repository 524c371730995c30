"""ConvTranspose3d 3x3x3/s2 (32->64 channels, 16x64x64 -> 31x127x127) + scale + AvgPool3d 2 + per-channel bias + scale, fp32.

y = s2 * (avgpool3d_2(s1 * conv_transpose3d(x, W, b, stride=2, padding=1)) + bias[c]), s1 and s2 learned scalars.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 16
HEIGHT = 64
WIDTH = 64

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "DEPTH": 8, "HEIGHT": 24, "WIDTH": 24},
     "public": True, "about": "a batch of one small volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 20, "OUT_CHANNELS": 45, "DEPTH": 5, "HEIGHT": 17,
                                  "WIDTH": 23},
     "about": "channel counts and depth, height and width that are not multiples of 32, all different"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (8, 32), "OUT_CHANNELS": (8, 72), "DEPTH": (3, 8),
                              "HEIGHT": (6, 24), "WIDTH": (6, 24)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """3-D transposed conv, learned scalar scale, 2x2x2 average pooling (floor), learned bias, second scalar scale."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1)
        self.scale1 = nn.Parameter(torch.tensor(0.5))
        self.bias = nn.Parameter(0.2 * torch.randn(out_channels, 1, 1, 1))
        self.scale2 = nn.Parameter(torch.tensor(1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.avg_pool3d(self.deconv(x) * self.scale1, 2)
        return (y + self.bias) * self.scale2


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
