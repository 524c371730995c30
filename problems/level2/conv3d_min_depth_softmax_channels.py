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
