"""InstanceNorm2d (per-sample, per-channel statistics, affine) of a 32 x 128 x 448 x 448 fp32 tensor.

For each (n, c): out = (x[n, c] - mean) / sqrt(var + eps) * weight_c + bias_c, mean and biased variance over (H, W).
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 128
HEIGHT = 448
WIDTH = 448

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "HEIGHT": 224, "WIDTH": 224}, "public": True,
     "about": "a batch of one sample with smaller images"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 37, "HEIGHT": 57, "WIDTH": 91},
     "about": "a channel count and non-square image sides that are not multiples of 32"},
    {"name": "small_images", "set": {"BATCH": 16, "CHANNELS": 64, "HEIGHT": 7, "WIDTH": 5},
     "about": "many channels of tiny images (short reductions)"},
    {"name": "large_images", "set": {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 1000, "WIDTH": 999},
     "about": "few channels of large images (long reductions)"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": (1, 32), "HEIGHT": (4, 200), "WIDTH": (4, 200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.InstanceNorm2d(num_features, affine=True) with random weight and bias."""

    def __init__(self, num_features: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(num_features, affine=True)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [CHANNELS]
