"""ConvTranspose3d 3x3x3/s2 (32->64 channels, 16x64x64 -> 32x128x128) + MaxPool3d 2 + channel softmax + subtract + swish + max over channels, fp32.

p = softmax_c(maxpool3d_2(conv_transpose3d(x, W, b, stride=2, padding=1, output_padding=1))) - s[c];
y = max over c of p * sigmoid(p)  -> (16, 16, 64, 64).
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
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 12, "OUT_CHANNELS": 50, "DEPTH": 5, "HEIGHT": 19,
                                  "WIDTH": 23},
     "about": "channel counts and depth, height and width that are not multiples of 32, all different"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (8, 32), "OUT_CHANNELS": (16, 64), "DEPTH": (3, 8),
                              "HEIGHT": (8, 24), "WIDTH": (8, 24)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """3-D transposed conv, max pooling, softmax over channels, per-channel shift, swish, channel max."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.subtract = nn.Parameter(0.5 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.softmax(F.max_pool3d(self.deconv(x), 2), dim=1)
        y = y - self.subtract[None, :, None, None, None]
        y = y * torch.sigmoid(y)
        return torch.amax(y, dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
