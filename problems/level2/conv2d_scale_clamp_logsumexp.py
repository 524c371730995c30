"""Conv2d 3x3 (96->128 channels, 256x256) + scale by 2 + clamp to [-2, 2] + logsumexp over channels -> (32, 1, 256, 256), fp32.

y[n, 0, h, w] = log(sum over c of exp(clamp(2 * conv2d(x, W, b)[n, c, h, w], -2, 2))).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 96
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
SCALE = 2.0
CLAMP = 2.0

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 67, "WIDTH": 99}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 21, "OUT_CHANNELS": 60, "HEIGHT": 37, "WIDTH": 50},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 45), "WIDTH": (5, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, scaling, symmetric clamp, channel-wise log-sum-exp (keepdim)."""

    def __init__(self, in_channels: int, out_channels: int, scale: float, clamp: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.scale = scale
        self.clamp = clamp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.clamp(self.conv(x) * self.scale, -self.clamp, self.clamp)
        return torch.logsumexp(y, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, SCALE, CLAMP]
