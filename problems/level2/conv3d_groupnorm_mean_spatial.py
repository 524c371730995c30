"""Conv3d 3x3x3 (32->64 channels, 24x96x96 volumes) + GroupNorm (8 groups) + mean over (D, H, W) -> (16, 64), fp32.

y[n, c] = mean over (d, h, w) of groupnorm(conv3d(x, W, b))[n, c, d, h, w].
"""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
DEPTH = 24
HEIGHT = 96
WIDTH = 96
GROUPS = 8

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "DEPTH": 13, "HEIGHT": 41, "WIDTH": 29}, "public": True,
     "about": "a batch of one volume whose depth, height and width are not multiples of 32"},
    {"name": "odd_groups", "set": {"BATCH": 3, "IN_CHANNELS": 10, "OUT_CHANNELS": 36, "GROUPS": 12, "DEPTH": 5,
                                   "HEIGHT": 27, "WIDTH": 33},
     "about": "channel counts that are not multiples of 32, groups of an odd channel count, a small non-cubic volume"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "DEPTH": (2, 10), "HEIGHT": (3, 20), "WIDTH": (3, 20)},
     "about": "batch and volume sizes drawn at random"},
]


class Model(nn.Module):
    """3-D conv, affine GroupNorm, spatial average per (sample, channel)."""

    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.5 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)).mean(dim=(2, 3, 4))


def get_inputs():
    # per-(sample, channel) offsets, as in real feature maps: with plain noise the spatial means would barely
    # depend on the input
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH) + torch.randn(BATCH, IN_CHANNELS, 1, 1, 1)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
