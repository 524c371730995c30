"""1x1 Conv2d (64->384 channels, 56x56, no bias) + inference-mode BatchNorm (running statistics) + ReLU6, fp32.

The MobileNetV2 expansion layer at inference: y = clamp((conv1x1(x) - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c], 0, 6).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
IN_CHANNELS = 64
OUT_CHANNELS = 384
HEIGHT = 56
WIDTH = 56

TAGS = ["fusion", "conv", "memory-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "HEIGHT": 113, "WIDTH": 97}, "public": True,
     "about": "a batch of one image whose height and width are not multiples of 32"},
    {"name": "odd_channels", "set": {"BATCH": 5, "IN_CHANNELS": 20, "OUT_CHANNELS": 100, "HEIGHT": 27, "WIDTH": 35},
     "about": "channel counts that are not multiples of 32 and a small non-square image"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "HEIGHT": (3, 50), "WIDTH": (3, 50)},
     "about": "batch and image sizes drawn at random"},
]


class Model(nn.Module):
    """Pointwise expansion conv, BatchNorm with frozen (stored) statistics, ReLU6."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.weight = nn.Parameter(1.0 + 0.5 * torch.rand(out_channels))
        self.bias = nn.Parameter(0.5 * torch.randn(out_channels))
        self.register_buffer("running_mean", 0.2 * torch.randn(out_channels))
        self.register_buffer("running_var", 0.1 + 0.2 * torch.rand(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.batch_norm(self.conv(x), self.running_mean, self.running_var, self.weight, self.bias,
                         training=False, eps=1e-5)
        return F.relu6(y)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
