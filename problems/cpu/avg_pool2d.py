"""2-D average pooling, 4x4 window, stride 4, over a (16, 32, 128, 128) fp32 tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL = 4

TAGS = ["pooling", "memory-bound"]
WORKLOADS = [
    {"name": "ragged", "set": {"BATCH": 2, "CHANNELS": 13, "HEIGHT": 130, "WIDTH": 99},
     "about": "an image whose height and width are not multiples of the window (partial windows dropped)"},
    {"name": "wide", "set": {"BATCH": 2, "CHANNELS": 17, "HEIGHT": 8, "WIDTH": 1030},
     "about": "a short, very wide image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (5, 20), "HEIGHT": (20, 130), "WIDTH": (20, 130)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[n, c, i, j] = mean of x[n, c, 4i:4i+4, 4j:4j+4] (non-overlapping windows)."""

    def __init__(self, kernel: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    # Offset so window means are not centred on zero.
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 1]


def get_init_inputs():
    return [KERNEL]
