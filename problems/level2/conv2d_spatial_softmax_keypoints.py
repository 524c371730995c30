"""Conv2d 3x3 (128->128 channels, 128x128) + spatial softmax per channel (learned temperature) + expected (x, y) keypoints -> (64, 128, 2), fp32.

From deep spatial autoencoders / visuomotor policies: p = softmax over (h, w) of conv2d(x)[n, c] / T;
y[n, c] = (sum p * xs, sum p * ys) with xs, ys the pixel coordinates in [-1, 1].
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 128
HEIGHT = 128
WIDTH = 128

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 61, "WIDTH": 83}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 3, "CHANNELS": 45, "HEIGHT": 100, "WIDTH": 37},
     "about": "a channel count that is not a multiple of 32 and a tall image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (8, 128), "HEIGHT": (5, 40), "WIDTH": (5, 40)},
     "about": "batch, channel and image sizes drawn at random"},
]


class Model(nn.Module):
    """Conv, softmax over all pixels of each channel, soft-argmax coordinates."""

    def __init__(self, channels: int, height: int, width: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.inv_temperature = nn.Parameter(torch.tensor(10.0))
        ys, xs = torch.meshgrid(torch.linspace(-1.0, 1.0, height), torch.linspace(-1.0, 1.0, width), indexing="ij")
        self.register_buffer("coords", torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1))  # (H*W, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x).flatten(2) * self.inv_temperature   # (N, C, H*W)
        p = torch.softmax(h, dim=-1)
        return p @ self.coords                                # (N, C, 2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, HEIGHT, WIDTH]
