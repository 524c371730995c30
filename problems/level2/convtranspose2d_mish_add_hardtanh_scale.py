"""ConvTranspose2d 4x4/s2 (128->64 channels, 128x128 -> 256x256) + Mish + add 0.5 + Hardtanh [-1, 1] + scale by 2, fp32.

y = 2 * hardtanh(mish(conv_transpose2d(x, W, b, stride=2, padding=1)) + 0.5, -1, 1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 64
HEIGHT = 128
WIDTH = 128
ADD = 0.5
SCALE = 2.0

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "IN_CHANNELS": 64, "OUT_CHANNELS": 32, "HEIGHT": 64, "WIDTH": 64},
     "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 100, "OUT_CHANNELS": 37, "HEIGHT": 45, "WIDTH": 61},
     "about": "channel counts and a non-square spatial size that are not multiples of 32"},
    {"name": "wide", "set": {"BATCH": 2, "IN_CHANNELS": 48, "OUT_CHANNELS": 24, "HEIGHT": 7, "WIDTH": 250},
     "about": "short, very wide images"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (16, 96), "OUT_CHANNELS": (16, 64), "HEIGHT": (16, 64),
                              "WIDTH": (16, 64)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling transposed conv, Mish, constant shift, hardtanh clipping, scaling."""

    def __init__(self, in_channels: int, out_channels: int, add: float, scale: float):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.add = add
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.mish(self.deconv(x)) + self.add
        return F.hardtanh(y, -1.0, 1.0) * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, ADD, SCALE]
