"""Conv2d 3x3 (64->256 channels, 256x256) + GLU over channels (first half * sigmoid(second half)) -> 128 channels, fp32.

a, g = split(conv2d(x, W, b), 2, dim=1);  y = a * sigmoid(g).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128   # channels after the GLU; the conv produces twice as many
HEIGHT = 256
WIDTH = 256

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 67, "WIDTH": 75}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 19, "OUT_CHANNELS": 45, "HEIGHT": 33, "WIDTH": 64},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 40), "WIDTH": (5, 40)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """A gated convolution: the conv emits values and gates, GLU multiplies them."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 2 * out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.glu(self.conv(x), dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
