"""Conv2d 3x3 (512->512 channels, 64x64, batch 16) + ReLU + L2 normalization over channels + learned per-channel scale, fp32.

SSD's conv4_3 + L2Norm layer: a = relu(conv2d(x)); y = scale[c] * a / (sqrt(sum over c of a^2) + eps), scale initialised to 20.
"""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 512
HEIGHT = 64
WIDTH = 64
EPS = 1e-10

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 15, "WIDTH": 23}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 2, "CHANNELS": 200, "HEIGHT": 33, "WIDTH": 20},
     "about": "a normalized channel count that is not a multiple of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "CHANNELS": (16, 300), "HEIGHT": (3, 20), "WIDTH": (3, 20)},
     "about": "batch, channel and image sizes drawn at random"},
]


class Model(nn.Module):
    """VGG conv + ReLU, then SSD's L2Norm: channel-wise unit norm times a learned scale."""

    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.scale = nn.Parameter(20.0 + torch.randn(channels))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.relu(self.conv(x))
        norm = a.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        return self.scale[None, :, None, None] * (a / norm)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EPS]
