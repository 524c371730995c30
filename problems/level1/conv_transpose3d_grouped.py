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
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "DEPTH": 20, "HEIGHT": 20, "WIDTH": 20}, "public": True,
     "about": "a batch of one smaller volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 60, "OUT_CHANNELS": 30, "GROUPS": 3, "DEPTH": 13,
                                  "HEIGHT": 21, "WIDTH": 27},
     "about": "another group count, with channels per group and odd, non-cubic volume sides that are not "
              "multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "DEPTH": (3, 20), "HEIGHT": (3, 20), "WIDTH": (3, 30)},
     "about": "volume sizes drawn at random"},
]


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
