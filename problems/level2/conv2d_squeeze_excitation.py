"""Conv2d 3x3 (128->128 channels, 256x256) + squeeze-and-excitation gate (global pool, 1x1 MLP, sigmoid, channel multiply), fp32.

h = conv2d(x); s = sigmoid(W2 relu(W1 mean_hw(h) + b1) + b2);  y = h * s[:, :, None, None]  (reduction 16).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
REDUCTION = 16

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 61, "WIDTH": 77}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "CHANNELS": 100, "HEIGHT": 41, "WIDTH": 30},
     "about": "a channel count that is not a multiple of 32 (nor of the reduction) and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (5, 45), "WIDTH": (5, 45)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv followed by an SE block (squeeze: average pool; excite: two 1x1 convs with ReLU, sigmoid; rescale)."""

    def __init__(self, channels: int, reduction: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x)
        s = F.adaptive_avg_pool2d(h, 1)
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return h * s


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, REDUCTION]
