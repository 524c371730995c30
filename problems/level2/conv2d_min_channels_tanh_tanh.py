"""Conv2d 3x3 (64->128 channels, 192x192) + min over channels (keepdim) + tanh + tanh -> (64, 1, 192, 192), fp32.

y = tanh(tanh(min over c of conv2d(x, W, b)[:, c])).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 192
WIDTH = 192

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 97, "WIDTH": 131}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 19, "OUT_CHANNELS": 45, "HEIGHT": 41, "WIDTH": 70},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 5), "HEIGHT": (5, 60), "WIDTH": (5, 60)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, channel-wise minimum, two tanh activations."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.min(self.conv(x), dim=1, keepdim=True).values
        return torch.tanh(torch.tanh(y))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
