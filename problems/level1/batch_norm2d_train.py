"""Training-mode BatchNorm2d (batch statistics, affine) of a 64 x 192 x 256 x 256 fp32 tensor.

mean_c, var_c = mean and biased variance of x[:, c] over (N, H, W);
out = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c.
(The running-stat buffer update nn.BatchNorm2d also does is a side effect and not part of the output.)
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 192
HEIGHT = 256
WIDTH = 256

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one sample with smaller images"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 100, "HEIGHT": 57, "WIDTH": 91},
     "about": "a channel count and non-square image sides that are not multiples of 32"},
    {"name": "few_channels", "set": {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 500, "WIDTH": 700},
     "about": "few channels over large images (a long reduction per channel)"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "CHANNELS": (3, 64), "HEIGHT": (8, 100), "WIDTH": (8, 100)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.BatchNorm2d in training mode, with random affine weight and bias."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        nn.init.uniform_(self.bn.weight, 0.5, 1.5)
        nn.init.uniform_(self.bn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [CHANNELS]
