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
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 67, "WIDTH": 99}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 40, "OUT_CHANNELS": 20, "HEIGHT": 21, "WIDTH": 30},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (3, 50), "WIDTH": (3, 50)},
     "about": "batch and image sizes drawn at random"},
]


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
