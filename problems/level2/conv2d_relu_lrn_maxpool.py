"""Conv2d 5x5 (96->256 channels, 27x27) + ReLU + LocalResponseNorm (size 5) + MaxPool2d 3x3/s2 -> (512, 256, 13, 13), fp32.

AlexNet's second layer: y = maxpool3s2(lrn(relu(conv5x5(x)))), lrn(a)_c = a_c / (k + alpha/n * sum_{|c'-c|<=2} a_c'^2)^beta.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 512
IN_CHANNELS = 96
OUT_CHANNELS = 256
SIZE = 27

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_image", "set": {"BATCH": 1, "SIZE": 37}, "public": True, "about": "a batch of one larger image"},
    {"name": "odd_channels", "set": {"BATCH": 8, "IN_CHANNELS": 48, "OUT_CHANNELS": 100, "SIZE": 13},
     "about": "channel counts that are not multiples of 32 and a smaller image"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "OUT_CHANNELS": (16, 200), "SIZE": (5, 27)},
     "about": "batch, channel count and image size drawn at random"},
]


class Model(nn.Module):
    """Conv 5x5 pad 2, ReLU, cross-channel LRN (n=5, alpha=1e-4, beta=0.75, k=2), overlapping max pool."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 5, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        y = F.local_response_norm(y, size=5, alpha=1e-4, beta=0.75, k=2.0)
        return F.max_pool2d(y, kernel_size=3, stride=2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
