"""2-D max pooling, 3x3 window, stride 2, padding 1, over a (8, 32, 128, 128) fp32 tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL = 3
STRIDE = 2
PADDING = 1

TAGS = ["pooling", "memory-bound"]
# eager's CPU max_pool2d visits each window with scalar code: 12.7-15.9 ms (min, lower quartile) on the idle 2-core
# CI machine, whose 32 MB L3 holds the freshly made 16.8 MB input: reading it once takes 0.34-0.48 ms there, and the
# vectorized reference solution takes 0.43-0.59 ms, about 29x for real (flagged at the 25x this ceiling once was);
# 50x would be faster than reading the input once
MAX_SPEEDUP = 50
WORKLOADS = [
    {"name": "odd_size", "set": {"BATCH": 2, "CHANNELS": 5, "HEIGHT": 99, "WIDTH": 131},
     "about": "an odd image height and width, not multiples of 8"},
    {"name": "wide", "set": {"BATCH": 1, "CHANNELS": 17, "HEIGHT": 5, "WIDTH": 1001},
     "about": "a short, very wide image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (3, 20), "HEIGHT": (10, 130), "WIDTH": (10, 130)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[n, c, i, j] = max of x[n, c, i*s - p + di, j*s - p + dj] over the k x k window (padding ignored)."""

    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
