"""L2 power-average pooling (LPPool2d, p = 2, kernel 3, stride 2) of a 32 x 64 x 512 x 512 fp32 tensor.

out[n, c, i, j] = sqrt(sum over a, b < 3 of x[n, c, 2i + a, 2j + b]^2)   (no padding); output 32 x 64 x 255 x 255.
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
HEIGHT = 512
WIDTH = 512
NORM_TYPE = 2.0
KERNEL_SIZE = 3
STRIDE = 2

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 511, "WIDTH": 299}, "public": True,
     "about": "a single non-square image with few channels"},
    {"name": "unaligned", "set": {"BATCH": 2, "CHANNELS": 17, "HEIGHT": 101, "WIDTH": 67},
     "about": "channel and spatial sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (3, 32), "HEIGHT": (20, 200), "WIDTH": (20, 200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.LPPool2d(norm_type, kernel_size, stride) on NCHW input."""

    def __init__(self, norm_type: float, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.LPPool2d(norm_type, kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [NORM_TYPE, KERNEL_SIZE, STRIDE]
