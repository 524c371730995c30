"""ConvTranspose2d 3x3/s2 (128->64 channels, 128x128 -> 256x256, output_padding 1) + affine InstanceNorm2d + ReLU, fp32.

A CycleGAN/pix2pixHD generator upsampling block: y = relu(instancenorm(conv_transpose2d(x, W, b, stride=2, padding=1, output_padding=1))).
"""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 64
HEIGHT = 128
WIDTH = 128

TAGS = ["fusion", "conv", "compute-bound"]


class Model(nn.Module):
    """2x upsampling transposed conv, per-sample-per-channel normalization with learned affine, ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.deconv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
