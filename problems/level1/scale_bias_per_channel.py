"""Per-channel affine x * scale[c] + bias[c] on a (128, 256, 128, 128) fp32 NCHW tensor (two ops in eager)."""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 256
HEIGHT = 128
WIDTH = 128

TAGS = ["broadcast", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 257, "WIDTH": 511}, "public": True,
     "about": "a single image with few channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 99, "WIDTH": 131},
     "about": "channel and spatial sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (2, 32), "HEIGHT": (9, 160), "WIDTH": (9, 250)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[n, c, h, w] = x[n, c, h, w] * scale[c] + bias[c]; scale and bias are learned (C,) parameters."""

    def __init__(self, channels: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(channels) * 0.5 + 1)
        self.bias = nn.Parameter(torch.randn(channels) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
