"""Grouped 3-D transposed convolution (2x upsampling): 4 groups, 3x3x3 kernel, stride 2, padding 1, output_padding 1, 128 -> 128 channels over (12, 128, 40, 40, 40).

Each group of 32 output channels sees only its own 32 input channels; the output is 80^3
(no bias).
"""
import torch
import torch.nn as nn

BATCH = 12
IN_CHANNELS = 128
OUT_CHANNELS = 128
DEPTH = 40
HEIGHT = 40
WIDTH = 40
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1
GROUPS = 4

TAGS = ["conv-transpose", "compute-bound"]


class Model(nn.Module):
    """nn.ConvTranspose3d with stride, padding, output_padding and groups, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 output_padding: int, groups: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       output_padding=output_padding, groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING, GROUPS]
