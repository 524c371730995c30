"""3-D max pooling (kernel 3, stride 2, padding 1) of a 16 x 32 x 128^3 fp32 volume.

out[n, c, d, h, w] = max over a, b, e < 3 of x[n, c, 2d - 1 + a, 2h - 1 + b, 2w - 1 + e]   (padding is -inf)
Output: 16 x 32 x 64^3.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
DEPTH = 128
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "CHANNELS": 3, "DEPTH": 63, "HEIGHT": 65, "WIDTH": 67}, "public": True,
     "about": "a single volume with few channels and odd extents"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 5, "DEPTH": 17, "HEIGHT": 33, "WIDTH": 99},
     "about": "channel and spatial sizes that are not multiples of 32, not a cube"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (2, 16), "DEPTH": (9, 40), "HEIGHT": (9, 40),
                              "WIDTH": (9, 40)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.MaxPool3d(kernel_size, stride, padding) on NCDHW input."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
