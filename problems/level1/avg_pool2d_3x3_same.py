"""3x3 average pooling, stride 1, padding 1, padding excluded from the count, of a 32 x 96 x 512 x 512 fp32 tensor.

out[n, c, i, j] = mean of x[n, c, i + a, j + b] over a, b in {-1, 0, 1} with the position inside the image
(so border outputs divide by 6 and corners by 4). Output has the input's shape.
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 96
HEIGHT = 512
WIDTH = 512
KERNEL_SIZE = 3
STRIDE = 1
PADDING = 1

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 256, "WIDTH": 256}, "public": True,
     "about": "a batch of one smaller image"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 37, "HEIGHT": 99, "WIDTH": 257},
     "about": "a wide, non-square image whose sides and channel count are not multiples of 32"},
    {"name": "tiny_images", "set": {"BATCH": 64, "CHANNELS": 64, "HEIGHT": 5, "WIDTH": 3},
     "about": "many tiny images, mostly border"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (8, 24), "HEIGHT": (5, 300), "WIDTH": (5, 300)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.AvgPool2d(kernel_size, stride, padding, count_include_pad=False) on NCHW input."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 0.5]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
