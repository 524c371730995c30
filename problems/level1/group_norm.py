"""GroupNorm (32 groups of 8 channels, affine) of a 64 x 256 x 224 x 224 fp32 tensor.

For each (n, group g): mean and biased variance over the group's 8 channels and all H x W positions;
out[n, c] = (x[n, c] - mean) / sqrt(var + eps) * weight_c + bias_c.
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 256
GROUPS = 32
HEIGHT = 224
WIDTH = 224

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "HEIGHT": 112, "WIDTH": 112}, "public": True,
     "about": "a batch of one sample with smaller images"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 96, "GROUPS": 12, "HEIGHT": 57, "WIDTH": 91},
     "about": "another group count, with non-square image sides that are not multiples of 32"},
    {"name": "wide_groups", "set": {"BATCH": 2, "CHANNELS": 60, "GROUPS": 5, "HEIGHT": 33, "WIDTH": 100},
     "about": "a few groups of more channels each, not a power of two, with unaligned image sides"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (4, 100), "WIDTH": (4, 100)},
     "about": "image sizes drawn at random"},
]


class Model(nn.Module):
    """nn.GroupNorm(num_groups, num_channels) with random affine weight and bias."""

    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)
        nn.init.uniform_(self.gn.weight, 0.5, 1.5)
        nn.init.uniform_(self.gn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [GROUPS, CHANNELS]
