"""1-D transposed convolution (2x upsampling): kernel 5, stride 2, padding 2, output_padding 1, 256 -> 256 channels over (32, 256, 16384).

out[n, o, t] = sum_{c, l, k : 2 l - 2 + k = t} w[c, o, k] * x[n, c, l]; the output length is
2 x 16384 (no bias).
"""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 256
OUT_CHANNELS = 256
LENGTH = 16384
KERNEL_SIZE = 5
STRIDE = 2
PADDING = 2
OUTPUT_PADDING = 1

TAGS = ["conv-transpose", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1, "LENGTH": 4096}, "public": True,
     "about": "a batch of one shorter signal"},
    {"name": "unaligned", "set": {"BATCH": 3, "IN_CHANNELS": 100, "OUT_CHANNELS": 37, "LENGTH": 3001},
     "about": "channel counts and a signal length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 4), "IN_CHANNELS": (4, 300), "OUT_CHANNELS": (4, 300),
                              "LENGTH": (10, 3000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.ConvTranspose1d with stride, padding and output_padding, no bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 output_padding: int):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       output_padding=output_padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING]
