"""1x1 Conv2d (256->1024 channels, 56x56, no bias) + BatchNorm2d (training) + residual add + ReLU, fp32.

The end of a ResNet bottleneck block: y = relu(batchnorm(conv1x1(x)) + identity).
"""
import torch
import torch.nn as nn

BATCH = 96
IN_CHANNELS = 256
OUT_CHANNELS = 1024
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 57, "WIDTH": 43}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 3, "IN_CHANNELS": 100, "OUT_CHANNELS": 300, "HEIGHT": 28, "WIDTH": 17},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (3, 30), "WIDTH": (3, 30)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Pointwise expansion conv, batch-statistics BatchNorm, shortcut add, ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.copy_(0.5 + 0.5 * torch.rand(out_channels))
            self.bn.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor, identity: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)) + identity)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH), torch.randn(BATCH, OUT_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
