"""3-D average pooling (kernel 2, stride 2) of a 16 x 32 x 128^3 fp32 volume.

out[n, c, d, h, w] = (1 / 8) * sum over a, b, e < 2 of x[n, c, 2d + a, 2h + b, 2w + e]; output 16 x 32 x 64^3.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
DEPTH = 128
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 2
STRIDE = 2

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "CHANNELS": 4}, "public": True,
     "about": "a batch of one volume with fewer channels"},
    {"name": "odd_sizes", "set": {"BATCH": 2, "CHANNELS": 5, "DEPTH": 33, "HEIGHT": 65, "WIDTH": 99},
     "about": "a non-cubic volume with odd sides that are not multiples of 32 (the last plane, row and column "
              "of the input fall outside every window)"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (2, 8), "DEPTH": (4, 70), "HEIGHT": (4, 70),
                              "WIDTH": (4, 70)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.AvgPool3d(kernel_size, stride) on NCDHW input."""

    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH) + 0.5]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE]
