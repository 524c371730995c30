"""ConvTranspose3d 3x3x3/s2 (64->32 channels, 16x64x64 -> 32x128x128) + BatchNorm3d (training) + AvgPool3d 2 -> (16, 32, 16, 64, 64), fp32.

y = avgpool3d_2(batchnorm(conv_transpose3d(x, W, b, stride=2, padding=1, output_padding=1))).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 32
DEPTH = 16
HEIGHT = 64
WIDTH = 64

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "IN_CHANNELS": 32, "OUT_CHANNELS": 16, "DEPTH": 8, "HEIGHT": 32,
                                   "WIDTH": 32},
     "public": True, "about": "a batch of one small volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 20, "OUT_CHANNELS": 12, "DEPTH": 5, "HEIGHT": 17,
                                  "WIDTH": 23},
     "about": "channel counts and depth, height and width that are not multiples of 32, all different"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (8, 32), "OUT_CHANNELS": (8, 40), "DEPTH": (3, 8),
                              "HEIGHT": (8, 24), "WIDTH": (8, 24)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling 3-D transposed conv, batch-statistics BatchNorm with learned affine, 2x2x2 average pooling."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm3d(out_channels)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.5 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool3d(self.bn(self.deconv(x)), 2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
