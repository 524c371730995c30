"""Group normalization, 64 channels in 8 groups, with affine weights, on a (16, 64, 64, 64) tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
GROUPS = 8
HEIGHT = 64
WIDTH = 64

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "odd_groups", "set": {"BATCH": 3, "CHANNELS": 30, "GROUPS": 6, "HEIGHT": 45, "WIDTH": 31},
     "about": "an odd number of channels per group and an image size that is not a multiple of 8"},
    {"name": "per_channel", "set": {"BATCH": 2, "CHANNELS": 12, "GROUPS": 12, "HEIGHT": 40, "WIDTH": 41},
     "about": "one channel per group"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "CHANNELS": 24, "GROUPS": 4, "HEIGHT": (3, 60), "WIDTH": (3, 60)},
     "about": "a batch and an image size drawn at random"},
]


class Model(nn.Module):
    """GroupNorm: per (sample, group) mean/var over channels-in-group x H x W, eps = 1e-5, then
    out = (x - mean) / sqrt(var + eps) * weight[c] + bias[c]."""

    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():  # non-trivial affine parameters so a kernel must apply them
            self.gn.weight.copy_(1 + 0.5 * torch.randn(channels))
            self.gn.bias.copy_(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [GROUPS, CHANNELS]
