"""2-D max pooling (kernel 3, stride 2, padding 1, dilation 2) of a 64 x 64 x 512 x 512 fp32 tensor.

out[n, c, i, j] = max over a, b < 3 of x[n, c, 2i - 1 + 2a, 2j - 1 + 2b]   (padding counts as -inf)
Output spatial size: floor((512 + 2 * 1 - 2 * (3 - 1) - 1) / 2) + 1 = 255.
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 64
HEIGHT = 512
WIDTH = 512
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 2

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 257, "WIDTH": 511}, "public": True,
     "about": "a single non-square image with few channels"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 13, "HEIGHT": 99, "WIDTH": 131},
     "about": "channel and spatial sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (3, 32), "HEIGHT": (16, 200), "WIDTH": (16, 200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.MaxPool2d with stride, padding and dilation on NCHW input."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
