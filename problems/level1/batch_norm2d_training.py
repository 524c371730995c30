"""Training-mode BatchNorm2d (batch statistics, affine) of a 32 x 4096 x 28 x 28 fp32 tensor, trained.

mean_c, var_c = mean and biased variance of x[:, c] over (N, H, W); x_hat = (x - mean_c) / sqrt(var_c + eps);
out = x_hat * weight_c + bias_c. The backward reduces per channel too: grad_bias_c = sum of g over (N, H, W),
grad_weight_c = sum of g * x_hat, and grad_x = weight_c / sqrt(var_c + eps) * (g - mean_c(g) - x_hat *
mean_c(g * x_hat)). Judged: the output and the gradients of x, bn.weight and bn.bias, for an upstream gradient g
drawn anew for every call. (The running-stat buffer update nn.BatchNorm2d also does is a side effect, not judged.)
"""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 4096
HEIGHT = 28
WIDTH = 28

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "CHANNELS": 64, "HEIGHT": 128, "WIDTH": 128}, "public": True,
     "about": "a batch of one sample with larger images and fewer channels"},
    {"name": "unaligned", "set": {"BATCH": 3, "CHANNELS": 100, "HEIGHT": 57, "WIDTH": 91},
     "about": "a channel count and non-square image sides that are not multiples of 32"},
    {"name": "few_channels", "set": {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 100, "WIDTH": 123},
     "about": "few channels over larger images (a longer reduction per channel)"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "CHANNELS": (3, 64), "HEIGHT": (8, 56), "WIDTH": (8, 56)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.BatchNorm2d in training mode, with random affine weight and bias."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        nn.init.uniform_(self.bn.weight, 0.5, 1.5)
        nn.init.uniform_(self.bn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2 + 0.5]


def get_init_inputs():
    return [CHANNELS]
