"""EfficientNet MBConv: 1x1 expand (40->240) BN SiLU, 5x5 depthwise BN SiLU, squeeze-excitation (240->10->240), 1x1 project BN, + x, on (128, 40, 56, 56).

h = silu(bn1(pw1(x))); h = silu(bn2(dw5x5(h)));
s = sigmoid(fc2(silu(fc1(mean_hw(h))))) (fc = 1x1 convs with bias, squeeze to 40 / 4 = 10 channels);
out = x + bn3(pw2(h * s)). Stride 1, convs without bias except the SE ones; BatchNorm in training mode.
"""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 40
EXPANSION = 6
KERNEL = 5
SE_RATIO = 0.25
HEIGHT = 56
WIDTH = 56

TAGS = ["architecture", "cnn", "memory-bound"]
WORKLOADS = [
    {"name": "odd_map", "set": {"BATCH": 2, "HEIGHT": 30, "WIDTH": 45},
     "about": "a small batch of non-square feature maps whose sides are not multiples of 8"},
    {"name": "other_block", "set": {"BATCH": 3, "CHANNELS": 24, "KERNEL": 3, "HEIGHT": 28, "WIDTH": 28},
     "about": "fewer channels and a smaller depthwise kernel"},
]


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.act = nn.SiLU()
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.expand(self.act(self.reduce(self.pool(x)))))


class Model(nn.Module):
    """Mobile inverted bottleneck with squeeze-and-excitation."""

    def __init__(self, channels: int, expansion: int, kernel: int, se_ratio: float):
        super().__init__()
        hidden = channels * expansion
        squeezed = max(1, int(channels * se_ratio))
        self.expand = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU())
        self.depthwise = nn.Sequential(
            nn.Conv2d(hidden, hidden, kernel, padding=kernel // 2, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.SiLU(),
        )
        self.se = SqueezeExcite(hidden, squeezed)
        self.project = nn.Sequential(nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.project(self.se(self.depthwise(self.expand(x))))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPANSION, KERNEL, SE_RATIO]
