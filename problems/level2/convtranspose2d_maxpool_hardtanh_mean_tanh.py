"""ConvTranspose2d 4x4/s2 (256->128 channels, 64x64 -> 128x128) + MaxPool2d 2 + Hardtanh [-1, 1] + spatial mean + tanh -> (64, 128, 1, 1), fp32.

y = tanh(mean over (h, w) of hardtanh(maxpool2x2(conv_transpose2d(x, W, b, stride=2, padding=1)), -1, 1)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 256
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "IN_CHANNELS": 64, "OUT_CHANNELS": 64, "HEIGHT": 32, "WIDTH": 32},
     "public": True, "about": "a batch of one image"},
    {"name": "unaligned", "set": {"BATCH": 3, "IN_CHANNELS": 100, "OUT_CHANNELS": 50, "HEIGHT": 37, "WIDTH": 29},
     "about": "channel counts and a non-square spatial size that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (2, 4), "IN_CHANNELS": (16, 96), "OUT_CHANNELS": (24, 80), "HEIGHT": (12, 40),
                              "WIDTH": (12, 40)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Transposed conv, max pooling back to the input resolution, clipping, global mean (keepdim), tanh."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.hardtanh(F.max_pool2d(self.deconv(x), 2), -1.0, 1.0)
        return torch.tanh(y.mean(dim=(2, 3), keepdim=True))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
