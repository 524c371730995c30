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
