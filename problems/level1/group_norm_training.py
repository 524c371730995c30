"""GroupNorm (32 groups of 16 channels, affine) of a 64 x 512 x 56 x 56 fp32 tensor, trained: forward and backward.

For each (n, group): mean and biased variance over the group's 16 channels and all H x W positions;
out[n, c] = (x[n, c] - mean) / sqrt(var + eps) * weight_c + bias_c. The backward reduces per (n, group) for the
gradient of x and per channel, over the batch and the image, for the gradients of weight and bias. Judged: the
output and the gradients of x, gn.weight and gn.bias, for an upstream gradient drawn anew for every call.
"""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 512
GROUPS = 32
HEIGHT = 56
WIDTH = 56

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "CHANNELS": 256, "HEIGHT": 112, "WIDTH": 112}, "public": True,
     "about": "a batch of one sample with larger images and fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 96, "GROUPS": 12, "HEIGHT": 57, "WIDTH": 91},
     "about": "another group count, with non-square image sides that are not multiples of 32"},
    {"name": "wide_groups", "set": {"BATCH": 2, "CHANNELS": 60, "GROUPS": 5, "HEIGHT": 33, "WIDTH": 100},
     "about": "a few groups of more channels each, not a power of two, with unaligned image sides"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": 64, "HEIGHT": (4, 100), "WIDTH": (4, 100)},
     "about": "image sizes drawn at random, with fewer channels"},
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
