"""ConvTranspose3d 3x3x3/s2 (64->64 channels, 16x48x48 -> 32x96x96) + ReLU + GroupNorm (8 groups), fp32.

y = groupnorm(relu(conv_transpose3d(x, W, b, stride=2, padding=1, output_padding=1))).
"""
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 64
DEPTH = 16
HEIGHT = 48
WIDTH = 48
GROUPS = 8

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_volume", "set": {"BATCH": 1, "IN_CHANNELS": 32, "DEPTH": 8, "HEIGHT": 24, "WIDTH": 24},
     "public": True, "about": "a batch of one small volume"},
    {"name": "unaligned", "set": {"BATCH": 2, "IN_CHANNELS": 20, "OUT_CHANNELS": 42, "GROUPS": 6, "DEPTH": 5,
                                  "HEIGHT": 17, "WIDTH": 23},
     "about": "channel counts, a group size and depth, height and width that are not powers of two, all different"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "IN_CHANNELS": (8, 48), "OUT_CHANNELS": 32, "DEPTH": (3, 8),
                              "HEIGHT": (8, 24), "WIDTH": (8, 24)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """2x upsampling 3-D transposed conv, ReLU, GroupNorm with learned affine (a 3-D U-Net decoder step)."""

    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.relu(self.deconv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
