"""ConvTranspose2d 4x4/s2 (128->128 channels, 128x128 -> 256x256, no bias) + per-channel bias + tanh + scale by 2, fp32.

y = 2 * tanh(conv_transpose2d(x, W, stride=2, padding=1) + bias[c]).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 128
WIDTH = 128
SCALE = 2.0

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 45, "WIDTH": 61}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 40, "OUT_CHANNELS": 20, "HEIGHT": 21, "WIDTH": 30},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (2, 25), "WIDTH": (2, 25)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling transposed conv, learned bias, tanh, constant scaling."""

    def __init__(self, in_channels: int, out_channels: int, scale: float):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bias = nn.Parameter(0.2 * torch.randn(out_channels, 1, 1))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.deconv(x) + self.bias) * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, SCALE]
