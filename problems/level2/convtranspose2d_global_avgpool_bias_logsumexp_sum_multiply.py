"""ConvTranspose2d 3x3 (128->128 channels, 256x256) + global avg pool + bias + logsumexp over channels + sum + x10 -> (32, 1), fp32.

p = mean over (h, w) of conv_transpose2d(x, W, b) + bias[c];  y[n] = 10 * sum(logsumexp_c(p[n])).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 256
WIDTH = 256
MULTIPLIER = 10.0

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "tall", "set": {"BATCH": 6, "HEIGHT": 61, "WIDTH": 15}, "public": True,
     "about": "a small batch of tall images whose sides are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 13, "IN_CHANNELS": 40, "OUT_CHANNELS": 50, "HEIGHT": 33, "WIDTH": 41},
     "about": "a ragged batch, channel counts that are not multiples of 32, a small image"},
    {"name": "drawn", "set": {"BATCH": (4, 12), "HEIGHT": (3, 25), "WIDTH": (3, 25)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Stride-1 transposed conv, spatial mean, extra bias, channel log-sum-exp, sum and scaling to one value per sample."""

    def __init__(self, in_channels: int, out_channels: int, multiplier: float):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, padding=1)
        self.bias = nn.Parameter(0.5 * torch.randn(out_channels, 1, 1))
        self.multiplier = multiplier

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.deconv(x).mean(dim=(2, 3), keepdim=True) + self.bias   # (N, C, 1, 1)
        y = torch.logsumexp(y, dim=1, keepdim=True)                      # (N, 1, 1, 1)
        return y.sum(dim=(2, 3)) * self.multiplier                        # (N, 1)


def get_inputs():
    # per-(sample, channel) offsets, as in real feature maps: a spatial mean of plain noise would make every
    # sample's output nearly the same
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH) + torch.randn(BATCH, IN_CHANNELS, 1, 1)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, MULTIPLIER]
