"""Depthwise 2-D convolution, 3x3 kernel, padding 1, with bias, over (32, 4096, 28, 28) fp32, trained.

out[n, c, y, x] = b[c] + sum_{i, j} w[c, 0, i, j] * in_padded[n, c, y + i, x + j] (groups = channels: one 3x3
filter per channel, as in MobileNet / ConvNeXt blocks, here a wide one). The backward: the gradient of the input
(the upstream gradient correlated with each channel's flipped filter), the gradient of each channel's 9 weights
(reduced over the batch and the image) and of its bias. 9 multiply-adds per element each way: streaming the tensors
is the cost. x is drawn at half the unit scale. Judged: the output and the gradients of x, conv.weight and
conv.bias, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 4096
HEIGHT = 28
WIDTH = 28

TAGS = ["conv", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "CHANNELS": 96, "HEIGHT": 112, "WIDTH": 112}, "public": True,
     "about": "a batch of one larger image with fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 57, "WIDTH": 91},
     "about": "a channel count and non-square image sides that are not multiples of 32"},
    {"name": "small_images", "set": {"BATCH": 16, "CHANNELS": 1000, "HEIGHT": 7, "WIDTH": 7},
     "about": "many channels over 7 x 7 images"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (4, 48), "HEIGHT": (5, 80), "WIDTH": (5, 80)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.Conv2d(channels, channels, 3, padding=1, groups=channels) with bias (PyTorch's default random init)."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 0.5]


def get_init_inputs():
    return [CHANNELS]
