"""Hardswish of a 64 x 192 x 256 x 256 fp32 tensor (MobileNetV3-style feature map).

out = x * relu6(x + 3) / 6
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 192
HEIGHT = 256
WIDTH = 256

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1}, "public": True, "about": "a batch of one"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 17, "HEIGHT": 99, "WIDTH": 257},
     "about": "sizes that are not multiples of 32 (an element count that is not either)"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (1, 32), "HEIGHT": (3, 200), "WIDTH": (5, 300)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise hardswish: out = x * relu6(x + 3) / 6."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return []
